import {
  eventPatternsFrom,
  type WebhooksAdminClient,
  WebhooksUnavailableError,
} from '@support-desk/platform/clients';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type WebhookFormValues,
  type WebhookPageOptions,
  webhookPage,
  type WebhooksPageOptions,
  webhooksPage,
} from '../pages/webhooks.js';
import { type FormBody, field, query } from '../forms.js';
import { type Admin, type ConsoleKit } from './console-session.js';
import { deletionRoutes } from './console-deletion.js';
import { pageQuery } from '../pages/lists.js';
import { pageTotal } from '../../use-cases/views.js';

const open = { config: { public: true } };
const SECTION = '/settings/webhooks';
/** A delivery status filter the service knows (anything else: no filter). */
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'];

const editHref = (id: string, notice = '') =>
  `${SECTION}/edit?id=${encodeURIComponent(id)}${notice ? `&${notice}` : ''}`;

/** The subscription form as sent (an unchecked box is absent). */
const formOf = (body: FormBody): WebhookFormValues => ({
  url: field(body, 'url'),
  events: field(body, 'events'),
  description: field(body, 'description'),
  active: field(body, 'active') === 'on',
});

/**
 * `/settings/webhooks`: the webhooks service's subscriptions, managed through its admin RPC
 * (`rpc`, the client deskctl uses too), as the signed-in administrator from the request's
 * address, so the service's use cases decide and record the change exactly as for its API.
 * A refusal is shown next to the form with the API's message; a service that does not answer
 * is a 503 page saying so (the rest of the console does not depend on it).
 */
export function webhookRoutes(pages: FastifyInstance, kit: ConsoleKit, rpc: WebhooksAdminClient): void {
  const { actor } = kit;
  const failure = (err: unknown) =>
    err instanceof WebhooksUnavailableError ? { status: 503, message: err.message } : kit.failure(err);

  /** The list page (the page the query asks for); when the list cannot be read, the reason and its status instead. */
  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    admin: Admin,
    extra: Omit<WebhooksPageOptions, 'frame' | 'webhooks' | 'total' | 'at'> = {},
    status = 200,
  ) {
    const at = { path: SECTION, filters: {}, ...pageQuery(request.method === 'GET' ? request.query : {}) };
    let webhooks: WebhooksPageOptions['webhooks'] = null;
    let total = 0;
    let error = extra.error;
    try {
      const r = await rpc.call(actor(request, admin), 'list', { page: at.page, limit: at.limit });
      webhooks = r.webhooks;
      total = pageTotal(r.pagination, at.page, at.limit, r.webhooks.length);
    } catch (err) {
      const f = failure(err);
      error = f.message;
      if (status < 400) status = f.status;
    }
    return kit.send(
      reply,
      status,
      webhooksPage({ frame: admin.frame, webhooks, total, at, ...extra, error }),
    );
  }

  /** One subscription's page with a page of its deliveries; an unknown one (or no answer) is the list with the reason. */
  async function subscriptionPage(
    request: FastifyRequest,
    reply: FastifyReply,
    admin: Admin,
    id: string,
    extra: Omit<WebhookPageOptions, 'frame' | 'webhook' | 'deliveries' | 'at'> = {},
    status = 200,
  ) {
    const who = actor(request, admin);
    const asked = request.method === 'GET' ? query(request.query, 'status') : undefined;
    const deliveryStatus = asked && DELIVERY_STATUSES.includes(asked) ? asked : undefined;
    const at = {
      path: `${SECTION}/edit`,
      filters: { id, status: deliveryStatus },
      ...pageQuery(request.method === 'GET' ? request.query : {}),
    };
    try {
      const { webhook } = await rpc.call(who, 'get', { id });
      const deliveries = await rpc
        .call(who, 'deliveries', {
          id,
          page: at.page,
          limit: at.limit,
          ...(deliveryStatus && { status: deliveryStatus }),
        })
        .then((r) => ({
          items: r.deliveries,
          total: pageTotal(r.pagination, at.page, at.limit, r.deliveries.length),
        }))
        .catch(() => null);
      return kit.send(reply, status, webhookPage({ frame: admin.frame, webhook, deliveries, at, ...extra }));
    } catch (err) {
      const f = failure(err);
      return listPage(request, reply, admin, { error: f.message }, f.status);
    }
  }

  pages.get(SECTION, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const deleted = query(request.query, 'deleted');
    return listPage(request, reply, admin, deleted ? { notice: `Webhook ${deleted} is deleted.` } : {});
  });

  pages.post(SECTION, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const form = formOf((request.body ?? {}) as FormBody);
    try {
      const { webhook } = await rpc.call(actor(request, admin), 'create', {
        url: form.url!,
        events: eventPatternsFrom(form.events!),
        description: form.description!,
        active: form.active!,
      });
      return listPage(request, reply, admin, { created: webhook }, 201);
    } catch (err) {
      const f = failure(err);
      return listPage(request, reply, admin, { error: f.message, form }, f.status);
    }
  });

  pages.get(`${SECTION}/edit`, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const q = (name: string) => query(request.query, name);
    const pinged = q('pinged');
    const replayed = q('replayed');
    const notice = q('saved')
      ? 'The subscription is saved.'
      : pinged
        ? `Ping ${pinged} is queued: it is listed below with its outcome.`
        : replayed
          ? `Delivery ${replayed} is queued again.`
          : undefined;
    return subscriptionPage(request, reply, admin, q('id') ?? '', notice ? { notice } : {});
  });

  pages.post(`${SECTION}/edit`, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const body = (request.body ?? {}) as FormBody;
    const id = field(body, 'id');
    const form = formOf(body);
    try {
      await rpc.call(actor(request, admin), 'update', {
        id,
        url: form.url!,
        events: eventPatternsFrom(form.events!),
        description: form.description!,
        active: form.active!,
      });
    } catch (err) {
      const f = failure(err);
      return subscriptionPage(request, reply, admin, id, { error: f.message, form }, f.status);
    }
    return reply.redirect(editHref(id, 'saved=1'), 303);
  });

  pages.post(`${SECTION}/rotate-secret`, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const id = field((request.body ?? {}) as FormBody, 'id');
    try {
      const { webhook } = await rpc.call(actor(request, admin), 'rotateSecret', { id });
      return subscriptionPage(request, reply, admin, id, { rotated: webhook });
    } catch (err) {
      const f = failure(err);
      return subscriptionPage(request, reply, admin, id, { error: f.message }, f.status);
    }
  });

  /** Ping and replay: queue a delivery, then back to the subscription's page, which lists it. */
  for (const action of ['ping', 'replay'] as const) {
    pages.post(`${SECTION}/${action}`, open, async (request, reply) => {
      const admin = await kit.administrator(request, reply);
      if (!admin) return reply;
      const body = (request.body ?? {}) as FormBody;
      const id = field(body, 'id');
      try {
        const who = actor(request, admin);
        const { delivery } =
          action === 'ping'
            ? await rpc.call(who, 'ping', { id })
            : await rpc.call(who, 'replay', { id, deliveryId: field(body, 'delivery') });
        const notice = `${action === 'ping' ? 'pinged' : 'replayed'}=${encodeURIComponent(delivery.id)}`;
        return reply.redirect(editHref(id, notice), 303);
      } catch (err) {
        const f = failure(err);
        return subscriptionPage(request, reply, admin, id, { error: f.message }, f.status);
      }
    });
  }

  deletionRoutes(pages, kit, {
    section: SECTION,
    title: 'Delete webhook',
    async question(request, admin, id) {
      const { webhook } = await rpc.call(actor(request, admin), 'get', { id });
      return `Delete the webhook subscription for ${webhook.url}?`;
    },
    consequence: 'Nothing more is sent to it, and its pending deliveries are dropped. This cannot be undone.',
    button: 'Delete subscription',
    back: (id) => editHref(id),
    remove: (request, admin, id) => rpc.call(actor(request, admin), 'delete', { id }),
    failure,
    listWithError: (request, reply, admin, error, status) =>
      listPage(request, reply, admin, { error }, status),
  });
}
