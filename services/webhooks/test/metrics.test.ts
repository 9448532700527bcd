// The webhooks metrics as Prometheus scrapes them (the process's registry): attempts by outcome,
// event-to-2xx latency, and the backlog gauges read from the store at scrape time.
import { newId } from '@support-desk/contracts';
import { eventually, metricReported, metricValue as scraped } from '@support-desk/platform/testing';
import t from 'tap';
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

t.test('attempts, latency and the backlog gauges follow what the deliveries do', async (t) => {
  const { app, nc, names } = await composeForTest(t, {
    // A failed attempt is retried after 100 ms, then only after a minute: it stays pending.
    env: { WEBHOOKS_RETRY_SCHEDULE_MS: '100,60000', WEBHOOKS_METRICS_CACHE_MS: '0' },
  });
  const ok = await startReceiver(t);
  const failing = await startReceiver(t, (_req, res) => res.writeHead(503).end());
  const gone = await startReceiver(t, (_req, res) => res.writeHead(410).end());
  const before = {
    success: await scraped('webhook_delivery_attempts_total', { outcome: 'success' }),
    failure: await scraped('webhook_delivery_attempts_total', { outcome: 'failure' }),
    latency: await scraped('webhook_delivery_latency_seconds', {}, 'webhook_delivery_latency_seconds_count'),
    gone: await scraped('webhook_subscriptions_disabled_total', { reason: 'gone' }),
  };
  t.equal(await scraped('webhook_deliveries_pending'), 0, 'nothing pending yet');
  t.equal(await scraped('webhook_oldest_pending_delivery_age_seconds'), 0, 'no oldest pending: 0');

  const toOk = await subscribe(app, { url: ok.url, events: ['request.*'] });
  const toFailing = await subscribe(app, { url: failing.url, events: ['request.*'] });
  const toGone = await subscribe(app, { url: gone.url, events: ['request.*'] });
  const resource = newId('request');
  await publish(nc, names, [event('request.created', resource)]);

  await eventually(async () => (await deliveries(app, toOk.id))[0]?.status === 'succeeded', {
    what: 'delivered to the receiver that accepts',
  });
  await eventually(async () => (await deliveries(app, toFailing.id))[0]?.attempts.length === 2, {
    what: 'two failed attempts, the next a minute away',
  });
  await eventually(async () => !(await getWebhook(app, toGone.id)).active, { what: 'disabled by its 410' });

  t.equal(await scraped('webhook_delivery_attempts_total', { outcome: 'success' }), before.success + 1);
  t.equal(
    await scraped('webhook_delivery_attempts_total', { outcome: 'failure' }),
    before.failure + 3,
    'two 503s and a 410',
  );
  t.equal(
    await scraped('webhook_delivery_latency_seconds', {}, 'webhook_delivery_latency_seconds_count'),
    before.latency + 1,
    'one event accepted: one latency observed (failed attempts are not)',
  );
  t.equal(await scraped('webhook_subscriptions_disabled_total', { reason: 'gone' }), before.gone + 1);

  // The store's figures at scrape time: the failing subscription's delivery waits for its retry.
  t.equal(await scraped('webhook_deliveries_pending', { subscription_state: 'active' }), 1);
  t.equal(await scraped('webhook_deliveries_pending', { subscription_state: 'inactive' }), 0);
  t.ok((await scraped('webhook_oldest_pending_delivery_age_seconds')) > 0, 'its age grows from the event');
  t.equal(await scraped('webhook_subscriptions_disabled', { reason: 'gone' }), 1);
  t.equal(await scraped('webhook_subscriptions_disabled', { reason: 'manual' }), 0);

  // An event for the disabled subscription is held: pending, counted as inactive.
  await publish(nc, names, [event('request.updated', resource)]);
  await eventually(async () => (await deliveries(app, toGone.id)).length === 2, { what: 'held' });
  t.equal(await scraped('webhook_deliveries_pending', { subscription_state: 'inactive' }), 1);

  // Turned off by an administrator: manual.
  const off = await app.inject({
    method: 'PATCH',
    url: `/v1/webhooks/${toOk.id}`,
    headers: admin,
    payload: { active: false },
  });
  t.equal(off.statusCode, 200);
  t.equal(await scraped('webhook_subscriptions_disabled', { reason: 'manual' }), 1);
});

t.test('a closed service no longer reports the backlog gauges', async (t) => {
  const { service } = await composeForTest(t, { env: { WEBHOOKS_METRICS_CACHE_MS: '0' } });
  t.ok(await metricReported('webhook_deliveries_pending'), 'reported while running');
  await service.close();
  t.notOk(await metricReported('webhook_deliveries_pending'), 'left out once closed');
});
