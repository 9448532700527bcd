import {
  type Changes,
  type CreateWebhookBody,
  EVENT_TYPES,
  newId,
  RESOURCE_TYPES,
  type UpdateWebhookBody,
  type WebhookListQuery,
  type WebhookWithSecret,
} from '@support-desk/contracts';
import {
  buildEvent,
  type EventContext,
  eventEntry,
  isAppError,
  listPage,
  listWindow,
  minuteKey,
  notFound,
  readLimit,
  seekOf,
  systemContext,
  validationError,
} from '@support-desk/platform/core';
import { isIP } from 'node:net';
import { isLoopback, refusal } from '../events/destination.js';
import type { StoredSecret, SubscriptionDoc } from '../store/subscriptions.js';
import type { Deps } from './deps.js';
import { toSubscriptionView } from './views.js';

const FAMILIES = new Set<string>(RESOURCE_TYPES);
const KNOWN_TYPES = new Set<string>(EVENT_TYPES);

/** `*`, `request.*` or a known type; anything else is a 400 naming the entry. */
function checkPatterns(events: string[]): string[] {
  for (const p of events) {
    const family = p.endsWith('.*') ? p.slice(0, -2) : null;
    const ok = p === '*' || (family !== null ? FAMILIES.has(family) : KNOWN_TYPES.has(p));
    if (!ok) {
      throw validationError(
        'body.events',
        `"${p.slice(0, 60)}" is not an event type, a family (${[...FAMILIES].map((f) => `${f}.*`).join(', ')}) or *`,
      );
    }
  }
  return events;
}

/** RFC 6761: `localhost` and its subdomains are loopback names. */
const LOOPBACK_NAME = /^(.+\.)?localhost\.?$/i;

/**
 * Plain http is the operator's choice: anywhere with WEBHOOKS_ALLOW_HTTP, else only to a loopback
 * receiver WEBHOOKS_ALLOWED_RANGES admits (what `npm start` and the test stacks allow for local
 * receivers); everything else must be https, or events and their signatures cross the network in
 * clear.
 */
function httpAllowed(deps: Deps, host: string): boolean {
  if (deps.allowHttp) return true;
  if (isIP(host)) return refusal(host, deps.allowedRanges) === null && isLoopback(host);
  return LOOPBACK_NAME.test(host) && refusal('127.0.0.1', deps.allowedRanges) === null;
}

/**
 * Checked at create and update: no credentials, no fragment (receivers never get it, so a URL
 * with one does not say where deliveries go), https unless plain http is allowed, and an address
 * in a refused range (a host name is checked at every delivery instead: DNS can change).
 */
function checkUrl(deps: Deps, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError('body.url', 'is not a valid URL');
  }
  if (url.username || url.password) throw validationError('body.url', 'must not carry credentials');
  if (raw.includes('#'))
    throw validationError('body.url', 'must not have a fragment (#…): it is never sent to the receiver');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const why = isIP(host) ? refusal(host, deps.allowedRanges) : null;
  if (why) throw validationError('body.url', `is not an allowed destination: ${why}`);
  if (url.protocol === 'http:' && !httpAllowed(deps, host)) {
    throw validationError(
      'body.url',
      'must use https (plain http only to a loopback receiver the operator admits, or where WEBHOOKS_ALLOW_HTTP allows it)',
    );
  }
  return url.toString();
}

/** A temporary subscription's end: a time to come (a past one would delete it at once). */
function checkExpiry(deps: Deps, at: string): Date {
  const date = new Date(at);
  if (!(date > deps.clock())) throw validationError('body.expiresAt', 'must be in the future');
  return date;
}

const publicFields = (
  s: Pick<SubscriptionDoc, 'url' | 'events' | 'description' | 'active' | 'expiresAt'>,
) => ({
  'webhook.url': s.url,
  'webhook.events': s.events,
  'webhook.description': s.description,
  'webhook.active': s.active,
  'webhook.expiresAt': s.expiresAt ? new Date(s.expiresAt).toISOString() : null,
});

/** `changes` of a subscription event: `webhook.<field>` entries, never a secret. */
function diff(before: Record<string, unknown>, after: Record<string, unknown>): Changes {
  const changes: Changes = {};
  for (const [field, to] of Object.entries(after)) {
    const from = before[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}

export async function getSubscription(deps: Deps, id: string) {
  const doc = await deps.subscriptions.findLiveForCall(id);
  if (!doc) throw notFound('Webhook');
  return doc;
}

export async function listSubscriptions(deps: Deps, query: WebhookListQuery) {
  const scope = { sort: '-id', kinds: [], filters: {} };
  const window = listWindow(query, scope);
  const { items, total } = await deps.subscriptions.page({
    skip: window.mode === 'page' ? window.skip : 0,
    limit: readLimit(window),
    seek: seekOf(window),
    count: window.mode === 'page',
  });
  const page = listPage(items, window, scope, (d) => ({ keys: [], id: d._id }), { total });
  const now = deps.clock();
  return { webhooks: page.items.map((d) => toSubscriptionView(d, now)), pagination: page.pagination };
}

export async function createSubscription(
  deps: Deps,
  ctx: EventContext,
  body: CreateWebhookBody,
): Promise<WebhookWithSecret> {
  const now = deps.clock();
  const url = checkUrl(deps, body.url);
  const events = checkPatterns(body.events);
  const secret = deps.secrets.generate();
  const active = body.active ?? true;
  const doc: SubscriptionDoc = {
    _id: newId('webhook', now.getTime()),
    url,
    events,
    description: body.description ?? '',
    active,
    disabledReason: active ? null : 'manual',
    disabledAt: active ? null : now,
    secrets: [{ sealed: deps.secrets.seal(secret), createdAt: now, expiresAt: null }],
    failures: 0,
    failingSince: null,
    deleted: false,
    expiresAt: body.expiresAt !== undefined ? checkExpiry(deps, body.expiresAt) : null,
    createdAt: now,
    updatedAt: now,
  };
  const event = buildEvent('system.config_changed', doc._id, ctx, diff({}, publicFields(doc)), now);
  await deps.subscriptions.insert(doc, [eventEntry(deps.names, event)]);
  return { ...toSubscriptionView(doc, now), secret };
}

export async function updateSubscription(deps: Deps, ctx: EventContext, id: string, body: UpdateWebhookBody) {
  const after: Partial<SubscriptionDoc> = {};
  if (body.url !== undefined) after.url = checkUrl(deps, body.url);
  if (body.events !== undefined) after.events = checkPatterns(body.events);
  if (body.description !== undefined) after.description = body.description;
  if (body.active !== undefined) after.active = body.active;
  if (body.expiresAt !== undefined)
    after.expiresAt = body.expiresAt === null ? null : checkExpiry(deps, body.expiresAt);
  const now = deps.clock();
  let resumed = false;
  const updated = await deps.subscriptions.update(id, (before) => {
    const next = { ...before, ...after };
    const changes = diff(publicFields(before), publicFields(next));
    if (Object.keys(changes).length === 0) return { write: null, result: before };
    const set: Record<string, unknown> = { ...after, updatedAt: now };
    if (after.active === false && before.active)
      Object.assign(set, { disabledReason: 'manual', disabledAt: now });
    if (after.active === true && !before.active) {
      // Re-enabled: a clean slate for the failure count; held deliveries resume below.
      Object.assign(set, { disabledReason: null, disabledAt: null, failures: 0, failingSince: null });
      changes['webhook.disabledReason'] = { from: before.disabledReason ?? 'manual', to: null };
      resumed = true;
    }
    const event = buildEvent('system.config_changed', id, ctx, changes, now);
    return {
      write: { set, outbox: [eventEntry(deps.names, event)] },
      result: { ...before, ...set } as SubscriptionDoc,
    };
  });
  if (resumed) {
    await deps.deliveries.resumeSubscription(id, now, minuteKey(now));
    deps.wake();
  }
  return toSubscriptionView(updated, now);
}

export async function deleteSubscription(deps: Deps, ctx: EventContext, id: string) {
  const now = deps.clock();
  await deps.subscriptions.update(id, () => {
    const changes = { 'webhook.deleted': { from: false, to: true } };
    const event = buildEvent('system.config_changed', id, ctx, changes, now);
    return {
      write: { set: { deleted: true, updatedAt: now }, outbox: [eventEntry(deps.names, event)] },
      result: null,
    };
  });
  await deps.deliveries.closeSubscription(id);
  return { id, deleted: true as const };
}

/**
 * Housekeeping: the temporary subscriptions past their `expiresAt` are deleted as a client's
 * delete would (their pending deliveries closed; a `system.config_changed` event, actor
 * `system`). Reads the live subscriptions (few, one read the intake shares) rather than a range
 * query FerretDB cannot push down. A replica that finds one already deleted by another moves on.
 */
export async function deleteExpiredSubscriptions(deps: Deps): Promise<number> {
  const now = deps.clock();
  const expired = (await deps.subscriptions.live()).filter(
    (s) => s.expiresAt && new Date(s.expiresAt) <= now,
  );
  let deleted = 0;
  for (const s of expired) {
    try {
      await deleteSubscription(deps, systemContext(), s._id);
      deleted++;
      deps.logger.info(
        { webhookId: s._id, expiresAt: s.expiresAt },
        'temporary webhook subscription expired',
      );
    } catch (err) {
      if (!(isAppError(err) && err.code === 'NOT_FOUND')) throw err;
    }
  }
  return deleted;
}

/**
 * A new secret; the ones that still sign keep signing until now + the overlap (an earlier
 * rotation's shorter expiry is kept), and expired ones are dropped.
 */
export async function rotateSecret(deps: Deps, ctx: EventContext, id: string): Promise<WebhookWithSecret> {
  const now = deps.clock();
  const secret = deps.secrets.generate();
  const overlapEnd = new Date(now.getTime() + deps.rotationOverlapMs);
  const updated = await deps.subscriptions.update(id, (before) => {
    const kept: StoredSecret[] = before.secrets
      .filter((s) => !s.expiresAt || new Date(s.expiresAt) > now)
      .map((s) => ({
        ...s,
        expiresAt: s.expiresAt && new Date(s.expiresAt) < overlapEnd ? s.expiresAt : overlapEnd,
      }));
    const secrets = [{ sealed: deps.secrets.seal(secret), createdAt: now, expiresAt: null }, ...kept];
    const changes = { 'webhook.secretRotatedAt': { from: null, to: now.toISOString() } };
    const event = buildEvent('system.config_changed', id, ctx, changes, now);
    const set = { secrets, updatedAt: now };
    return { write: { set, outbox: [eventEntry(deps.names, event)] }, result: { ...before, ...set } };
  });
  return { ...toSubscriptionView(updated, now), secret };
}

/** The secrets that sign a delivery made now: the current one and any still in its overlap. */
export function signingSecrets(deps: Pick<Deps, 'secrets'>, doc: SubscriptionDoc, now: Date): string[] {
  return doc.secrets
    .filter((s) => !s.expiresAt || new Date(s.expiresAt) > now)
    .map((s) => deps.secrets.open(s.sealed));
}
