// The webhooks admin RPC (what the settings console and deskctl use), over the real NATS, through
// the one client in platform: every op, refusals worded as the HTTP API words them and changing
// nothing, the admin as the events' actor with the console's address, a tolerant reader.
import { natsNames, type AdminActor } from '@support-desk/contracts';
import { fixtures } from '@support-desk/contracts/fixtures';
import { generateKeyPairSync } from 'node:crypto';
import { AppError } from '@support-desk/platform/core';
import { callRpc, decodeJson, encodeJson, messageSigner } from '@support-desk/platform/messaging';
import {
  WEBHOOKS_NOT_ANSWERING,
  webhooksAdminClient,
  WebhooksUnavailableError,
} from '@support-desk/platform/clients';
import { eventually, testSigner, uniqueName } from '@support-desk/platform/testing';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { admin, composeForTest, eventsFrom, startReceiver } from './helpers.js';

const console_: AdminActor = {
  userId: 'usr_01jconsoleadmin000000000',
  name: 'Console Admin',
  email: 'console-admin@example.com',
  via: 'console',
  ip: '203.0.113.9',
  userAgent: 'Mozilla/5.0 (test)',
  requestId: 'req-console-1',
};

/** What the settings console and deskctl run as: identity, which signs every request. */
const identity = testSigner('identity');

t.test('every op through the client, and each change an event with the admin and address', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  const rpc = webhooksAdminClient(nc, names, identity);
  const events = await eventsFrom(nc, names.eventsStream);
  const receiver = await startReceiver(t);

  const created = await rpc.call(console_, 'create', {
    url: receiver.url,
    events: ['request.*'],
    description: 'from the console',
  });
  const sub = created.webhook;
  t.match(sub, { url: receiver.url, events: ['request.*'], active: true, description: 'from the console' });
  t.match(sub.secret, /^whsec_/, 'the secret, once');

  const got = await rpc.call(console_, 'get', { id: sub.id });
  t.notOk('secret' in got.webhook, 'never again');
  const listed = await rpc.call(console_, 'list', { limit: 10 });
  t.same(
    listed.webhooks.map((w) => w.id),
    [sub.id],
  );
  const http = await app.inject({ method: 'GET', url: `/v1/webhooks/${sub.id}`, headers: admin });
  t.same(got.webhook, http.json().data, 'the same view as the HTTP API');

  const updated = await rpc.call(console_, 'update', { id: sub.id, description: 'renamed', active: false });
  t.match(updated.webhook, { description: 'renamed', active: false, disabledReason: 'manual' });
  await rpc.call(console_, 'update', { id: sub.id, active: true });

  const pinged = await rpc.call(console_, 'ping', { id: sub.id });
  t.equal(pinged.delivery.eventType, 'webhook.ping');
  await eventually(() => receiver.received.length === 1, { what: 'the ping' });
  const verified = new Webhook(sub.secret).verify(receiver.received[0].body, receiver.received[0].headers);
  t.match(verified, { type: 'webhook.ping', webhookId: sub.id }, 'signed with the secret shown');

  const log = await eventually(
    async () => {
      const r = await rpc.call(console_, 'deliveries', { id: sub.id, status: 'succeeded' });
      return r.deliveries.length === 1 && r;
    },
    { what: 'the ping delivered' },
  );
  t.match(log.deliveries[0], { id: pinged.delivery.id, status: 'succeeded', attempts: [{ status: 204 }] });
  const replayed = await rpc.call(console_, 'replay', { id: sub.id, deliveryId: pinged.delivery.id });
  t.match(replayed.delivery, { id: pinged.delivery.id, status: 'pending' });
  await eventually(() => receiver.received.length === 2, { what: 'the replay' });
  t.equal(receiver.received[1].headers['webhook-id'], receiver.received[0].headers['webhook-id']);

  const rotated = await rpc.call({ ...console_, via: 'deskctl', ip: null }, 'rotateSecret', { id: sub.id });
  t.match(rotated.webhook.secret, /^whsec_/);
  t.not(rotated.webhook.secret, sub.secret, 'a new secret');
  t.ok(rotated.webhook.previousSecretExpiresAt, 'the previous one signs until the overlap ends');

  t.same(await rpc.call(console_, 'delete', { id: sub.id }), { ok: true, id: sub.id, deleted: true });
  const gone = await app.inject({ method: 'GET', url: `/v1/webhooks/${sub.id}`, headers: admin });
  t.equal(gone.statusCode, 404, 'deleted for the HTTP API too');

  // create, two updates, rotation, delete: five config events.
  const mine = await events(5, sub.id);
  t.same(
    mine.map((e) => e.type),
    Array(5).fill('system.config_changed'),
  );
  t.match(mine[0], {
    actor: { id: console_.userId, email: console_.email, name: console_.name, role: 'admin' },
    metadata: { source: 'console', userAgent: 'Mozilla/5.0 (test)', requestId: 'req-console-1' },
    ipAddress: '203.0.113.9',
    changes: { 'webhook.url': { from: null, to: receiver.url } },
  });
  t.match(mine[3], {
    actor: { id: console_.userId },
    metadata: { source: 'cli', userAgent: 'Mozilla/5.0 (test)' },
    changes: { 'webhook.secretRotatedAt': {} },
  });
  t.notOk('ipAddress' in mine[3], 'deskctl has no address');
  t.match(mine[4].changes, { 'webhook.deleted': { from: false, to: true } });
});

t.test('trigger: a test event of a catalogued type to the subscriptions that take it', async (t) => {
  const { nc, names } = await composeForTest(t);
  const rpc = webhooksAdminClient(nc, names, identity);
  const receiver = await startReceiver(t, (_q, res) => res.writeHead(410).end());
  const other = await startReceiver(t);
  const { webhook: sub } = await rpc.call(console_, 'create', { url: receiver.url, events: ['request.*'] });
  const { webhook: users } = await rpc.call(console_, 'create', { url: other.url, events: ['user.*'] });

  const triggered = await rpc.call(console_, 'trigger', { type: 'request.created' });
  t.match(triggered.event, { id: /^evt_/, type: 'request.created' });
  t.same(
    triggered.deliveries.map((d) => [d.webhookId, d.eventType, d.eventId]),
    [[sub.id, 'request.created', null]],
    'one delivery, to the subscription that takes the type; no event log entry',
  );
  await eventually(() => receiver.received.length === 1, { what: 'the test event' });
  const payload = new Webhook(sub.secret).verify(receiver.received[0].body, receiver.received[0].headers);
  t.match(payload, {
    id: triggered.event.id,
    type: 'request.created',
    resourceType: 'request',
    resourceId: /^req_/,
    test: true,
    webhookId: sub.id,
    actor: { email: console_.email },
  });
  t.notOk('snapshot' in (payload as object), 'no snapshot: no such request exists');
  t.equal(other.received.length, 0, 'a subscription to user.* gets nothing');
  // Like a ping, a test counts for nothing: the receiver's 410 fails it, disables nothing.
  const failed = await eventually(
    async () => {
      const r = await rpc.call(console_, 'deliveries', { id: sub.id, status: 'failed' });
      return r.deliveries.length === 1 && r.deliveries[0];
    },
    { what: 'the 410 recorded' },
  );
  t.match(failed, { attempts: [{ status: 410 }] });
  t.match((await rpc.call(console_, 'get', { id: sub.id })).webhook, { active: true });

  const one = await rpc.call(console_, 'trigger', { type: 'user.created', webhookId: users.id });
  t.same(
    one.deliveries.map((d) => d.webhookId),
    [users.id],
  );
  await eventually(() => other.received.length === 1, { what: 'the named subscription' });

  const unknown = await rpc.call(console_, 'trigger', { type: 'request.exploded' }).catch((e: unknown) => e);
  t.ok(unknown instanceof AppError);
  t.match(unknown, {
    code: 'VALIDATION_ERROR',
    message:
      /body\.type.*"request\.exploded" is not an event type: request\.created, .*system\.config_changed/,
  });
  const notTaken = await rpc
    .call(console_, 'trigger', { type: 'user.created', webhookId: sub.id })
    .catch((e: unknown) => e);
  t.match(notTaken, {
    code: 'VALIDATION_ERROR',
    message: /body\.webhookId.*takes request\.\*, not user\.created/,
  });
  t.equal(receiver.received.length, 1, 'refusals send nothing');
});

t.test('a bad request gets the HTTP API error and changes nothing', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  const rpc = webhooksAdminClient(nc, names, identity);
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
    return { code: err.code, message: err.message, details: err.details };
  };
  const viaHttp = async (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: object) => {
    const res = await app.inject({ method, url, headers: admin, ...(payload ? { payload } : {}) });
    const { code, message, details } = res.json().error;
    return { code, message, details };
  };

  const badUrl = { url: 'ftp://example.com/x', events: ['request.created'] };
  t.same(
    await refusal(rpc.call(console_, 'create', badUrl)),
    await viaHttp('POST', '/v1/webhooks', badUrl),
    'schema refusal: same code, message and details',
  );
  const ssrf = { url: 'http://10.1.2.3/hook', events: ['request.created'] };
  const ssrfRefusal = await refusal(rpc.call(console_, 'create', ssrf));
  t.match(ssrfRefusal, { code: 'VALIDATION_ERROR', message: /body\.url.*not an allowed destination/ });
  t.same(ssrfRefusal, await viaHttp('POST', '/v1/webhooks', ssrf), 'the SSRF refusal, worded alike');
  const unknownType = { url: 'https://hooks.example.com/x', events: ['request.exploded'] };
  t.same(
    await refusal(rpc.call(console_, 'create', unknownType)),
    await viaHttp('POST', '/v1/webhooks', unknownType),
  );

  const missing = 'whk_01jzzzzzzzzzzzzzzzzzzzzzzz';
  t.same(
    await refusal(rpc.call(console_, 'update', { id: missing, active: false })),
    await viaHttp('PATCH', `/v1/webhooks/${missing}`, { active: false }),
    'an unknown subscription: NOT_FOUND',
  );
  t.same(
    await refusal(rpc.call(console_, 'get', { id: 'nonsense' })),
    await viaHttp('GET', '/v1/webhooks/nonsense'),
    'a malformed id: NOT_FOUND, as in a path',
  );
  const sub = (await rpc.call(console_, 'create', { url: 'https://hooks.example.com/ok', events: ['*'] }))
    .webhook;
  t.match(
    await refusal(rpc.call(console_, 'update', { id: sub.id })),
    {
      code: 'VALIDATION_ERROR',
    },
    'an update without a change',
  );
  t.match(
    await refusal(
      callRpc(nc, names.webhooksAdmin, { op: 'explode', actor: console_ }, { signer: identity }).then((r) => {
        const e = (r as { error?: { code: string; message: string } }).error;
        if (e) throw new AppError(e.code as 'VALIDATION_ERROR', e.message);
        return r;
      }),
    ),
    { code: 'VALIDATION_ERROR', message: /op/ },
    'an unknown op',
  );
  t.match(
    await refusal(rpc.call({ ...console_, userId: '' }, 'list', {})),
    { code: 'VALIDATION_ERROR', message: /actor\.userId/ },
    'a request without its actor',
  );

  const after = await rpc.call(console_, 'list', {});
  t.same(
    after.webhooks.map((w) => w.id),
    [sub.id],
    'only the one valid create changed anything',
  );
  t.match(after.webhooks[0], { active: true, url: 'https://hooks.example.com/ok' });
});

t.test('a tolerant reader: unknown fields of a newer client are ignored', async (t) => {
  const { nc, names } = await composeForTest(t);
  const reply = await callRpc<Record<string, unknown>, { ok?: boolean; webhook?: { url: string } }>(
    nc,
    names.webhooksAdmin,
    {
      op: 'create',
      actor: { ...console_, team: 'blue' },
      url: 'https://hooks.example.com/new',
      events: ['request.created'],
      filter: { priority: 'high' },
    },
    { signer: identity },
  );
  t.equal(reply.ok, true);
  t.equal(reply.webhook?.url, 'https://hooks.example.com/new');
});

t.test('no webhooks service: one clear error', async (t) => {
  const { nc } = await composeForTest(t, { start: false });
  const nowhere = webhooksAdminClient(nc, natsNames(uniqueName('nobody')), identity, 1000);
  const err = await nowhere.call(console_, 'list', {}).catch((e: unknown) => e);
  t.ok(err instanceof WebhooksUnavailableError, 'no responder');
  t.equal((err as Error).message, WEBHOOKS_NOT_ANSWERING);
  const noNats = await webhooksAdminClient(null, natsNames('x'), identity)
    .call(console_, 'list', {})
    .catch((e: unknown) => e);
  t.ok(noNats instanceof WebhooksUnavailableError, 'no NATS connection');
});

t.test('requests of this and a newer release (frozen fixtures) are answered', async (t) => {
  const { nc, names } = await composeForTest(t);
  const frozen = fixtures.webhooksAdmin();
  for (const version of ['v1', 'future'] as const) {
    for (const [op, request] of Object.entries(frozen[version].requests)) {
      const data = encodeJson(request);
      const headers = identity.sign(names.webhooksAdmin, data);
      const msg = await nc.request(names.webhooksAdmin, data, { timeout: 5000, headers });
      const body = decodeJson<{ v: number; ok: boolean; reply: Record<string, unknown> }>(msg.data);
      t.match(body, { v: 1, ok: true }, `${op} (${version}) in the envelope`);
      // The fixtures name a subscription this store does not have: create and list succeed, the
      // rest are refused as the API would (a request not read right would be a VALIDATION_ERROR).
      if (op === 'create')
        t.match(body.reply, { ok: true, webhook: { url: 'https://hooks.example.com/desk' } });
      else if (op === 'list') t.match(body.reply, { ok: true, webhooks: Array });
      else t.match(body.reply, { error: { code: 'NOT_FOUND' } }, `${op} (${version}) read`);
    }
  }
});

t.test('only requests identity signed are answered: a forged admin changes nothing', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  const subject = names.webhooksAdmin;
  const forged = encodeJson({
    v: 1,
    op: 'create',
    actor: console_,
    url: 'https://collector.example.com/everything',
    events: ['*'],
  });
  const answered = (headers?: ReturnType<typeof identity.sign>) =>
    nc.request(subject, forged, { timeout: 500, ...(headers ? { headers } : {}) }).then(
      () => true,
      () => false,
    );
  t.notOk(await answered(), 'unsigned: no answer');
  t.notOk(await answered(testSigner('requests').sign(subject, forged)), 'signed by requests: no answer');
  t.notOk(await answered(testSigner('gateway').sign(subject, forged)), 'signed by the gateway: no answer');
  const stranger = messageSigner('identity', generateKeyPairSync('ed25519').privateKey);
  t.notOk(await answered(stranger.sign(subject, forged)), 'claiming identity with another key: no answer');
  const elsewhere = identity.sign(`${names.namespace}.events.system.config_changed`, forged);
  t.notOk(await answered(elsewhere), 'signed by identity for another subject: no answer');
  // Signed by identity, but with no reply subject: never acted on (nothing waits for its answer).
  nc.publish(subject, forged, { headers: identity.sign(subject, forged) });
  await nc.flush();
  await new Promise((r) => setTimeout(r, 300));
  const listed = await app.inject({ method: 'GET', url: '/v1/webhooks', headers: admin });
  t.same(listed.json().data.webhooks, [], 'no subscription was created');
  t.ok(await answered(identity.sign(subject, forged)), "identity's own request is answered");
});
