import { newId } from '@support-desk/contracts';
import { eventually } from '@support-desk/platform/testing';
import { Webhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import {
  admin,
  composeForTest,
  deliveries,
  event,
  getWebhook,
  publish,
  startReceiver,
  subscribe,
} from './helpers.js';
import { fanOut } from '../src/use-cases/deliveries.js';
import { createDeliveryWorker } from '../src/use-cases/delivery-worker.js';
import type { Deps } from '../src/use-cases/deps.js';

/** A delivery worker of the test's own over `deps` (wired as `deps.wake`), stopped at teardown. */
function ownWorker(t: Test, deps: Deps) {
  const worker = createDeliveryWorker(deps, {
    pollMs: 50,
    sweepMs: 60_000,
    concurrency: 4,
    leaseMs: 8000,
    attemptMs: 2500,
    subscriptionCacheMs: 5000,
    schedule: [100],
    disableAfterFailures: 100,
    disableAfterMs: 60_000,
  });
  deps.wake = worker.wake;
  t.teardown(() => worker.stop());
  return worker;
}

t.test('retries with backoff against a receiver that fails twice, same webhook-id each time', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  const receiver = await startReceiver(t, (_req, res, n) => res.writeHead(n <= 2 ? 503 : 200).end('ok'));
  const sub = await subscribe(app, { url: receiver.url, events: ['request.created'] });
  await publish(nc, names, [event('request.created')]);
  const log = await eventually(
    async () => {
      const [d] = await deliveries(app, sub.id);
      return d?.status === 'succeeded' && d;
    },
    { what: 'delivered on the third attempt' },
  );
  t.same(
    log.attempts.map((a) => a.status),
    [503, 503, 200],
  );
  t.equal(receiver.received.length, 3);
  t.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id');
  // The schedule (100 ms, then 200 ms, ±20%): each retry waited at least its delay's lower bound.
  t.ok(receiver.received[1].at - receiver.received[0].at >= 80, 'first retry after its delay');
  t.ok(receiver.received[2].at - receiver.received[1].at >= 160, 'second retry after a longer one');
});

t.test('a receiver that hangs: a timeout is recorded, the delivery retried, then failed', async (t) => {
  const { app, nc, names } = await composeForTest(t, {
    env: { WEBHOOKS_RETRY_SCHEDULE_MS: '100', WEBHOOKS_RESPONSE_TIMEOUT_MS: '300' },
  });
  const receiver = await startReceiver(t, () => undefined);
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  await publish(nc, names, [event('request.created')]);
  const [d] = await eventually(
    async () => {
      const list = await deliveries(app, sub.id);
      return list[0]?.status === 'failed' && list;
    },
    { what: 'failed after its schedule' },
  );
  t.equal(d.attempts.length, 2, 'the first attempt and one retry');
  for (const a of d.attempts) {
    t.equal(a.status, null);
    t.match(a.error, /timeout/);
  }
});

t.test('410 Gone disables the subscription at once, with the reason; re-enabling resumes', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  let gone = true;
  const receiver = await startReceiver(t, (_req, res) => res.writeHead(gone ? 410 : 200).end());
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  const resource = newId('request');
  await publish(nc, names, [event('request.created', resource)]);
  await eventually(async () => !(await getWebhook(app, sub.id)).active, { what: 'disabled' });
  const off = await getWebhook(app, sub.id);
  t.match(off.disabledReason, /410/);
  t.equal((await deliveries(app, sub.id))[0].status, 'failed');

  // Events keep being recorded while it is off; nothing is attempted.
  const later = event('request.updated', resource);
  await publish(nc, names, [later]);
  await eventually(async () => (await deliveries(app, sub.id)).length === 2, { what: 'recorded' });
  t.equal(receiver.received.length, 1, 'nothing sent while disabled');

  gone = false;
  const on = await app.inject({
    method: 'PATCH',
    url: `/v1/webhooks/${sub.id}`,
    headers: admin,
    payload: { active: true },
  });
  t.match(on.json().data, { active: true, disabledReason: null });
  await eventually(() => receiver.received.length === 2, { what: 'the held delivery goes out' });
  t.equal(JSON.parse(receiver.received[1].body).id, later.id);
});

t.test('re-enabled while the worker holds its delivery: the delivery still goes out', async (t) => {
  // The race: the worker read the subscription (off); it was re-enabled and its held deliveries
  // made due again; then the worker held the delivery, which undid that, and it waited for ever.
  const { app, service } = await composeForTest(t, { start: false });
  const receiver = await startReceiver(t);
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  const active = (on: boolean) =>
    app.inject({ method: 'PATCH', url: `/v1/webhooks/${sub.id}`, headers: admin, payload: { active: on } });
  t.equal((await active(false)).statusCode, 200);
  let reenabled: Promise<unknown> | undefined;
  const deps: Deps = {
    ...service.deps,
    intakeFloor: async () => 2,
    subscriptions: {
      ...service.deps.subscriptions,
      findLive: async (id: string) => {
        const found = await service.deps.subscriptions.findLive(id);
        reenabled ??= active(true); // once, right after the worker's first read
        await reenabled;
        return found;
      },
    },
  };
  const worker = ownWorker(t, deps);
  const created = event('request.created');
  await fanOut(deps)(created, 1);
  worker.start();
  await eventually(() => receiver.received.length === 1, { what: 'the delivery goes out' });
  t.equal(JSON.parse(receiver.received[0].body).id, created.id);
  t.match((await getWebhook(app, sub.id)) as object, { active: true });
});

t.test('a subscription that keeps failing is disabled after the threshold, with an event', async (t) => {
  const { app, nc, names } = await composeForTest(t, {
    env: { WEBHOOKS_DISABLE_AFTER_FAILURES: '3', WEBHOOKS_DISABLE_AFTER_MS: '0' },
  });
  const receiver = await startReceiver(t, (_req, res) => res.writeHead(500).end());
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  await publish(nc, names, [event('request.created')]);
  await eventually(async () => !(await getWebhook(app, sub.id)).active, { what: 'auto-disabled' });
  t.match((await getWebhook(app, sub.id)).disabledReason, /^failing: 3 failed attempts in a row/);
  t.equal(receiver.received.length, 3, 'no attempt after the threshold');
  const [d] = await deliveries(app, sub.id);
  t.equal(d.status, 'pending', 'the delivery is held, not lost');
});

t.test('a 410 answer to a ping fails the ping and leaves the subscription active', async (t) => {
  const { app } = await composeForTest(t);
  const receiver = await startReceiver(t, (_req, res) => res.writeHead(410).end());
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  const ping = await app.inject({ method: 'POST', url: `/v1/webhooks/${sub.id}/ping`, headers: admin });
  t.equal(ping.statusCode, 202);
  const [d] = await eventually(
    async () => {
      const list = await deliveries(app, sub.id);
      return list[0]?.status === 'failed' && list;
    },
    { what: 'the ping failed' },
  );
  t.match(d, { eventType: 'webhook.ping', attempts: [{ status: 410 }] }, 'one attempt, not retried');
  t.match(await getWebhook(app, sub.id), { active: true, disabledReason: null }, 'a ping disables nothing');
});

t.test('replay sends a delivery again with the same webhook-id', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  const receiver = await startReceiver(t);
  // (Not `*`: the subscription's own creation is an event too.)
  const sub = await subscribe(app, { url: receiver.url, events: ['system.sync_completed'] });
  await publish(nc, names, [event('system.sync_completed', 'ldap')]);
  await eventually(() => receiver.received.length === 1);
  const [d] = await eventually(async () => {
    const list = await deliveries(app, sub.id);
    return list[0]?.status === 'succeeded' && list;
  });
  const res = await app.inject({
    method: 'POST',
    url: `/v1/webhooks/${sub.id}/deliveries/${d.id}/replay`,
    headers: admin,
  });
  t.equal(res.statusCode, 202);
  t.equal(res.json().data.status, 'pending');
  await eventually(() => receiver.received.length === 2, { what: 'replayed' });
  t.equal(receiver.received[1].headers['webhook-id'], d.id);
  t.equal(receiver.received[1].body, receiver.received[0].body, 'the same payload');
  const other = await subscribe(app, { url: receiver.url, events: ['*'] });
  const wrong = await app.inject({
    method: 'POST',
    url: `/v1/webhooks/${other.id}/deliveries/${d.id}/replay`,
    headers: admin,
  });
  t.equal(wrong.statusCode, 404, "another subscription's delivery is not found");
});

t.test('rotation: old and new secrets both sign during the overlap', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  const receiver = await startReceiver(t);
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  const rotated = await app.inject({
    method: 'POST',
    url: `/v1/webhooks/${sub.id}/rotate-secret`,
    headers: admin,
  });
  t.equal(rotated.statusCode, 200);
  const fresh = rotated.json().data as { secret: string; previousSecretExpiresAt: string };
  t.not(fresh.secret, sub.secret);
  t.ok(Date.parse(fresh.previousSecretExpiresAt) > Date.now(), 'the overlap is shown');
  await publish(nc, names, [event('request.created')]);
  await eventually(() => receiver.received.length === 1);
  const got = receiver.received[0];
  t.equal(got.headers['webhook-signature'].split(' ').length, 2, 'two signatures');
  t.ok(new Webhook(sub.secret).verify(got.body, got.headers), 'the old secret verifies');
  t.ok(new Webhook(fresh.secret).verify(got.body, got.headers), 'the new secret verifies');
});

t.test('rotation with no overlap: only the new secret signs', async (t) => {
  const { app, nc, names } = await composeForTest(t, { env: { WEBHOOKS_ROTATION_OVERLAP_MS: '0' } });
  const receiver = await startReceiver(t);
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  const rotated = await app.inject({
    method: 'POST',
    url: `/v1/webhooks/${sub.id}/rotate-secret`,
    headers: admin,
  });
  const fresh = rotated.json().data as { secret: string };
  await publish(nc, names, [event('request.created')]);
  await eventually(() => receiver.received.length === 1);
  const got = receiver.received[0];
  t.throws(() => new Webhook(sub.secret).verify(got.body, got.headers), 'the old secret no longer verifies');
  t.ok(new Webhook(fresh.secret).verify(got.body, got.headers));
});

t.test('events of one resource reach a subscriber in order, even across a retry', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  const receiver = await startReceiver(t, (_req, res, n) => res.writeHead(n === 1 ? 500 : 200).end());
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  const resource = newId('request');
  const events = [
    event('request.created', resource),
    event('request.updated', resource),
    event('request.status_changed', resource),
    event('request.assigned', resource),
  ];
  await publish(nc, names, events);
  await eventually(() => receiver.received.length === 5, { what: 'four events, one retried' });
  const ids = receiver.received.map((r) => JSON.parse(r.body).id as string);
  t.same(ids, [events[0].id, ...events.map((e) => e.id)], 'the first event retried before the others went');
  t.ok(await deliveries(app, sub.id));
});

t.test('an earlier event taken in while a lane is read still goes out first', async (t) => {
  // The race two busy replicas hit: the worker read the lane's head (the second event, the only
  // one stored), then the intake stored the first event and its floor rose past both, so the
  // second went out first. Here the intake takes the first event in the moment the worker asks
  // how far it is; the worker must read the head after that answer.
  const { app, service } = await composeForTest(t, { start: false });
  const receiver = await startReceiver(t);
  await subscribe(app, { url: receiver.url, events: ['request.*'] });
  const resource = newId('request');
  const [first, second] = [event('request.created', resource), event('request.updated', resource)];
  let takenIn: Promise<void> | undefined;
  const deps: Deps = {
    ...service.deps,
    intakeFloor: async () => {
      takenIn ??= intake(first, 1);
      await takenIn;
      return 2;
    },
  };
  const intake = fanOut(deps);
  const worker = ownWorker(t, deps);
  await intake(second, 2);
  worker.start();
  await eventually(() => receiver.received.length === 2, { what: 'both events delivered' });
  t.same(
    receiver.received.map((r) => JSON.parse(r.body).id as string),
    [first.id, second.id],
    'the first event went out first',
  );
});

t.test(
  'retention: a finished delivery leaves the log after the retention, a pending one stays',
  async (t) => {
    const { app, nc, names } = await composeForTest(t, {
      env: {
        WEBHOOKS_RETENTION_DAYS: String(1 / 86_400), // one second
        WEBHOOKS_RETENTION_SWEEP_MS: '100',
        WEBHOOKS_RETRY_SCHEDULE_MS: '60000',
      },
    });
    const ok = await startReceiver(t);
    const failing = await startReceiver(t, (_req, res) => res.writeHead(500).end());
    const kept = await subscribe(app, { url: ok.url, events: ['request.*'] });
    const retried = await subscribe(app, { url: failing.url, events: ['request.*'] });
    await publish(nc, names, [event('request.created')]);
    await eventually(async () => (await deliveries(app, kept.id))[0]?.status === 'succeeded');
    await eventually(async () => (await deliveries(app, kept.id)).length === 0, { what: 'purged' });
    const pending = await deliveries(app, retried.id);
    t.equal(pending.length, 1, 'the pending delivery (retry in a minute) is kept');
    t.equal(pending[0].status, 'pending');
  },
);
