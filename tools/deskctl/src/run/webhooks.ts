import type {
  WebhookDelivery,
  WebhooksAdminOp,
  WebhooksAdminReplies,
  WebhookSubscription,
} from '@support-desk/contracts';
import { type Deps, type EventContext, pageTotal } from '@support-desk/identity/admin';
import {
  adminActorOf,
  eventPatternsFrom,
  webhooksAdminClient,
  type WebhooksAdminFields,
  WebhooksUnavailableError,
} from '@support-desk/platform/clients';
import { required, UsageError } from '../args.js';
import { type CliNats, ifNotExists, type Run, when } from '../command.js';
import { webhookCommands } from '../commands/webhooks.js';
import { listRun } from './list.js';

/**
 * `deskctl webhooks …`: the webhooks service's subscriptions, through its admin RPC (the one
 * client the settings console uses too), so the same checks and the same events as its HTTP API,
 * with the acting admin (`--as`, or the deskctl actor) as the events' actor and source `cli`.
 */
export const ask = <K extends WebhooksAdminOp>(
  deps: Deps,
  nats: CliNats | null,
  ctx: EventContext,
  op: K,
  fields: WebhooksAdminFields<K>,
): Promise<WebhooksAdminReplies[K]> =>
  nats
    ? webhooksAdminClient(nats.nc, deps.names, nats.signer, 10_000).call(
        adminActorOf(ctx, 'deskctl'),
        op,
        fields,
      )
    : Promise.reject(new WebhooksUnavailableError());

const status = (w: WebhookSubscription) =>
  w.active ? 'active' : `disabled (${w.disabledReason ?? 'manual'})`;
const lastAttempt = (d: WebhookDelivery) => {
  const a = d.attempts.at(-1);
  return a ? (a.status !== null ? String(a.status) : (a.error ?? '-')) : '-';
};

function describe(w: WebhookSubscription): string {
  return [
    `${w.id}  ${w.url}`,
    `events:      ${w.events.join(', ')}`,
    `status:      ${status(w)}`,
    `description: ${w.description || '-'}`,
    `created:     ${when(w.createdAt)}   updated: ${when(w.updatedAt)}`,
    ...(w.previousSecretExpiresAt ? [`previous secret signs until ${when(w.previousSecretExpiresAt)}`] : []),
  ].join('\n');
}

const secretText = (secret: string) =>
  `\n  ${secret}\n\nThe signing secret: store it now, it is shown only once.`;

/** The subscription with this URL and these patterns, if one exists (pages through all of them). */
async function existing(deps: Deps, nats: CliNats | null, ctx: EventContext, url: string, events: string[]) {
  const wanted = JSON.stringify([...events].sort());
  let href: string;
  try {
    href = new URL(url).toString();
  } catch {
    return undefined; // not a URL: the create says why
  }
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await ask(deps, nats, ctx, 'list', { limit: 100, ...(cursor ? { cursor } : {}) });
    const found = r.webhooks.find((w) => w.url === href && JSON.stringify([...w.events].sort()) === wanted);
    if (found) return found;
    if (!r.pagination.nextCursor) return undefined;
    cursor = r.pagination.nextCursor;
  }
  return undefined;
}

export const runs: Record<string, Run> = {
  'webhooks list': listRun<WebhookSubscription>(webhookCommands['webhooks list'], {
    key: 'webhooks',
    columns: ['id', 'url', 'events', 'status', 'description', 'created'],
    row: (w) => [w.id, w.url, w.events.join(','), status(w), w.description, when(w.createdAt)],
    async fetch(deps, ctx, _v, _pos, nats, { page, limit }) {
      const r = await ask(deps, nats, ctx, 'list', { page, limit });
      return { items: r.webhooks, total: pageTotal(r.pagination, page, limit, r.webhooks.length) };
    },
  }),
  async 'webhooks show'(deps, ctx, _v, pos, nats) {
    const { webhook } = await ask(deps, nats, ctx, 'get', { id: pos[0] });
    return { json: webhook, text: describe(webhook) };
  },
  async 'webhooks create'(deps, ctx, v, _pos, nats) {
    const url = required(v, 'url');
    const events = eventPatternsFrom(required(v, 'events'));
    if (ifNotExists(v)) {
      const found = await existing(deps, nats, ctx, url, events);
      if (found)
        return {
          json: { ...found, existed: true },
          text: `webhook ${found.id} for ${found.url} (${found.events.join(', ')}) already exists; its secret is not shown again`,
        };
    }
    const description = typeof v.description === 'string' ? v.description : undefined;
    const { webhook } = await ask(deps, nats, ctx, 'create', {
      url,
      events,
      ...(description !== undefined && { description }),
      ...(v.inactive === true && { active: false }),
    });
    return {
      json: webhook,
      text: `created webhook ${webhook.id} for ${webhook.url}\n${secretText(webhook.secret)}`,
    };
  },
  async 'webhooks update'(deps, ctx, v, pos, nats) {
    if (v.enable === true && v.disable === true) throw new UsageError('--enable or --disable, not both');
    const changes = {
      ...(typeof v.url === 'string' && { url: v.url }),
      ...(typeof v.events === 'string' && { events: eventPatternsFrom(v.events) }),
      ...(typeof v.description === 'string' && { description: v.description }),
      ...(v.enable === true && { active: true }),
      ...(v.disable === true && { active: false }),
    };
    if (Object.keys(changes).length === 0)
      throw new UsageError('nothing to change: give --url, --events, --description, --enable or --disable');
    const { webhook } = await ask(deps, nats, ctx, 'update', { id: pos[0], ...changes });
    return { json: webhook, text: `updated webhook ${webhook.id}\n${describe(webhook)}` };
  },
  async 'webhooks delete'(deps, ctx, _v, pos, nats) {
    const r = await ask(deps, nats, ctx, 'delete', { id: pos[0] });
    return { json: { id: r.id, deleted: r.deleted }, text: `deleted webhook ${r.id}` };
  },
  async 'webhooks rotate-secret'(deps, ctx, _v, pos, nats) {
    const { webhook } = await ask(deps, nats, ctx, 'rotateSecret', { id: pos[0] });
    const until = webhook.previousSecretExpiresAt
      ? `\nThe previous secret keeps signing until ${when(webhook.previousSecretExpiresAt)}.`
      : '';
    return {
      json: webhook,
      text: `new secret for webhook ${webhook.id}\n${secretText(webhook.secret)}${until}`,
    };
  },
  async 'webhooks ping'(deps, ctx, _v, pos, nats) {
    const { delivery } = await ask(deps, nats, ctx, 'ping', { id: pos[0] });
    return {
      json: delivery,
      text: `ping ${delivery.id} queued; see "deskctl webhooks deliveries ${pos[0]}"`,
    };
  },
  'webhooks deliveries': listRun<WebhookDelivery>(webhookCommands['webhooks deliveries'], {
    key: 'deliveries',
    columns: ['id', 'event', 'status', 'attempts', 'last', 'next retry', 'created'],
    row: (d) => [
      d.id,
      d.eventType,
      d.status,
      String(d.attempts.length),
      lastAttempt(d),
      when(d.nextAttemptAt),
      when(d.createdAt),
    ],
    async fetch(deps, ctx, v, pos, nats, { page, limit }) {
      const str = (name: string) => (typeof v[name] === 'string' ? (v[name] as string) : undefined);
      const statuses = str('status');
      const eventType = str('event-type');
      const r = await ask(deps, nats, ctx, 'deliveries', {
        id: pos[0],
        page,
        limit,
        ...(statuses && { status: statuses }),
        ...(eventType && { eventType }),
      });
      return { items: r.deliveries, total: pageTotal(r.pagination, page, limit, r.deliveries.length) };
    },
  }),
  async 'webhooks replay'(deps, ctx, _v, pos, nats) {
    const { delivery } = await ask(deps, nats, ctx, 'replay', { id: pos[0], deliveryId: pos[1] });
    return { json: delivery, text: `delivery ${delivery.id} queued again` };
  },
};
