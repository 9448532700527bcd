// Every service's Prometheus metrics (METRICS_PORT), scraped after real traffic through the
// gateway: the key series exist and moved, the gateway never proxies /metrics, and every label
// stays low-cardinality (no ids, no emails, no raw paths), however many distinct ids were used.
import t from 'tap';
import { cast } from '../src/actors.js';
import { scrape as scrapeInstance, total } from '../src/metrics.js';
import { eventually, startStack } from '../src/stack.js';
import { createRequest } from '../src/world.js';

const stack = await startStack(t);
const { agent } = await cast(stack);

const scrape = (instance: string) => scrapeInstance(stack, instance);

// Traffic: creates, reads by many distinct ids (found and not), comments, refused credentials.
const ids: string[] = [];
t.test('traffic through the gateway', async (t) => {
  for (let i = 0; i < 5; i++) ids.push((await createRequest(t, agent.api, { title: `metrics ${i}` })).id);
  for (const id of ids) {
    t.equal((await agent.api.get(`/v1/requests/${id}`)).status, 200);
    t.equal((await agent.api.post(`/v1/requests/${id}/comments`, { content: 'seen' })).status, 201);
  }
  for (let i = 0; i < 5; i++) {
    t.equal((await agent.api.get(`/v1/requests/req_${String(i).repeat(26)}`)).status, 404);
  }
  t.equal((await stack.api('sd_key_not_a_real_key_at_all').get('/v1/requests')).status, 401);
  t.equal((await stack.api(null).get('/v1/requests')).status, 401);
});

t.test('the gateway does not proxy /metrics', async (t) => {
  const res = await agent.api.get('/metrics');
  t.not(res.status, 200);
  t.notMatch(res.text, /process_cpu_seconds_total/);
});

t.test('every service: process metrics and HTTP by route template', async (t) => {
  for (const instance of stack.instances) {
    const samples = await scrape(instance);
    t.ok(total(samples, 'process_cpu_seconds_total') > 0, `${instance}: process metrics`);
    t.ok(total(samples, 'nodejs_heap_size_used_bytes') > 0, `${instance}: runtime metrics`);
    t.ok(
      total(samples, 'http_server_request_duration_seconds_count') > 0,
      `${instance}: HTTP requests counted`,
    );
  }
  const gateway = await scrape('gateway');
  t.ok(
    total(gateway, 'http_server_request_duration_seconds_count', {
      http_route: '/v1/requests/:id',
      http_response_status_code: '200',
    }) >= ids.length,
    'reads by id are one series under the route template',
  );
  t.ok(
    total(gateway, 'http_server_request_duration_seconds_count', {
      http_route: '/v1/requests/:id',
      http_response_status_code: '404',
    }) >= 5,
  );
});

t.test('gateway: authentications, rate-limit decisions, caches', async (t) => {
  const gateway = await scrape('gateway');
  t.ok(total(gateway, 'gateway_authentications_total', { credential: 'api_key', outcome: 'ok' }) >= 15);
  t.ok(total(gateway, 'gateway_authentications_total', { credential: 'none', outcome: 'missing' }) >= 1);
  t.ok(total(gateway, 'gateway_authentications_total', { credential: 'api_key', outcome: 'malformed' }) >= 1);
  t.ok(
    total(gateway, 'gateway_rate_limit_decisions_total', { bucket: 'general', decision: 'admitted' }) >= 10,
  );
  t.ok(total(gateway, 'gateway_cache_lookups_total', { cache: 'api_keys', result: 'hit' }) >= 10);
});

t.test('events: outbox published, audit consumer acked with its lag, identity resolved keys', async (t) => {
  await eventually(async () => {
    const audit = await scrape('audit');
    return total(audit, 'consumer_messages_total', { consumer: 'audit', outcome: 'acked' }) >= 10;
  });
  const audit = await scrape('audit');
  t.ok(audit.some((s) => s.name === 'consumer_pending_messages' && s.labels.consumer === 'audit'));
  t.ok(total(audit, 'consumer_messages_delivered_total', { consumer: 'audit' }) >= 10);
  t.ok(total(audit, 'consumer_handler_duration_seconds_count', { consumer: 'audit' }) >= 10);
  const requests = await scrape('requests');
  t.ok(total(requests, 'outbox_published_total', { collection: 'requests' }) >= 10);
  t.ok(requests.some((s) => s.name === 'outbox_oldest_entry_age_seconds'));
  const identity = await scrape('identity');
  t.ok(total(identity, 'identity_api_keys_resolved_total', { outcome: 'valid' }) >= 1);
});

t.test('labels stay low-cardinality: no ids, emails or raw paths', async (t) => {
  const idLike = /[a-z]{2,5}_[0-9a-z]{26}|@|[0-9a-f]{24}|\d{5,}/i;
  for (const instance of stack.instances) {
    const samples = await scrape(instance);
    const values = new Map<string, Set<string>>();
    for (const s of samples) {
      for (const [label, value] of Object.entries(s.labels)) {
        if (label === 'le' || label === 'quantile') continue;
        t.notMatch(value, idLike, `${instance}: ${s.name}{${label}="${value}"}`);
        const key = `${s.name}:${label}`;
        if (!values.has(key)) values.set(key, new Set());
        values.get(key)!.add(value);
      }
    }
    // A route label has one value per route served: the gateway serves the whole API, OAuth, SCIM,
    // the console and the docs (about 60, all seen on a stack other files share); a raw path would
    // grow without bound. Every other label stays far below.
    for (const [key, set] of values) {
      const bound = key.endsWith(':http_route') ? 120 : 40;
      t.ok(set.size <= bound, `${instance}: ${key} has ${set.size} values (at most ${bound})`);
    }
  }
});
