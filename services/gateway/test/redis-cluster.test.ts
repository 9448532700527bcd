// The gateway on a Redis Cluster (REDIS_CLUSTER_NODES): the limiter's script calls, the deny
// list's look-ups and the idempotency store each touch one slot at a time, so a Cluster answers
// them as one server does. A private cluster: three primaries, one replica each.
import type { AddressInfo } from 'node:net';
import { startPrivateRedisCluster, testEnv, testLogger, uniqueName } from '@support-desk/platform/testing';
import t from 'tap';
import { gatewayConfig } from '../src/config.js';
import { createDenyList } from '../src/store/deny-list.js';
import { createRateLimiter, type RateDecision } from '../src/store/rate-limiter.js';
import { connectRedis, slotOf } from '../src/store/redis-client.js';
import { bearer, harness } from './helpers.js';
import { json, startWrites } from './write-upstream.js';

const cluster = await startPrivateRedisCluster(t);

/** The gateway's own client for the cluster, from its configuration. */
async function clusterClient() {
  const redis = connectRedis(
    gatewayConfig({
      PRINCIPAL_SIGNING_KEY: testEnv.principalKeys.signingKey,
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_COMMAND_TIMEOUT_MS: 5_000,
    }),
    testLogger(),
  );
  t.teardown(() => redis.disconnect());
  await redis.connect();
  return redis;
}

t.test('the limiter: one turn of calls on keys in many slots, counted exactly', async (t) => {
  const redis = await clusterClient();
  const limiter = createRateLimiter({
    redis,
    prefix: `${uniqueName('rlc')}:`,
    windowSeconds: 60,
    failureMode: 'fail-closed',
    logger: testLogger(),
  });
  // 200 calls of one key, and 2 calls each of 40 keys that lie in many slots, in one turn.
  const many: Promise<RateDecision | null>[] = [];
  const spread: Promise<RateDecision | null>[] = [];
  for (let i = 0; i < 200; i++) many.push(limiter.take('general:key:a', 150));
  for (let k = 0; k < 40; k++)
    for (let i = 0; i < 2; i++) spread.push(limiter.take(`general:key:s${k}`, 1, { plan: 'x' }));
  const slots = new Set(Array.from({ length: 40 }, (_, k) => slotOf(redis)!(`x:general:{key:s${k}}`)));
  t.ok(slots.size > 30, `the 40 keys lie in ${slots.size} slots`);
  const a = (await Promise.all(many)) as RateDecision[];
  t.equal(a.filter((d) => d.allowed).length, 150, 'key a: 150 of 200');
  t.same(
    a.filter((d) => d.allowed).map((d) => d.remaining),
    Array.from({ length: 150 }, (_, i) => 149 - i),
    'decided in the order the calls were made',
  );
  const s = (await Promise.all(spread)) as RateDecision[];
  t.equal(s.filter((d) => d.allowed).length, 40, 'each of the 40 keys: 1 of 2');
  t.equal(limiter.stats.failClosed, 0, 'Redis answered every call');
  t.ok(
    slotOf(redis)!('p:general:{key:a}') === slotOf(redis)!('p:search:{key:a}'),
    "one credential's buckets share a slot",
  );
});

t.test('the deny list: a user and a grant of one token, in two slots', async (t) => {
  const redis = await clusterClient();
  const options = {
    redis,
    prefix: `${uniqueName('dlc')}:`,
    ttlSeconds: 60,
    leewaySeconds: 5,
    cacheTtlMs: 0,
    logger: testLogger(),
  };
  const writer = createDenyList(options);
  const reader = createDenyList(options);
  const at = new Date().toISOString();
  t.equal(await reader.isDenied('usr_1', 'grant_1'), null, 'nothing denied yet');
  await writer.denyGrant('grant_1', at);
  t.equal(await reader.isDenied('usr_1', 'grant_1'), 'grant', "another replica reads the grant's entry");
  await writer.deny('usr_2', at);
  t.equal(await reader.isDenied('usr_2', 'grant_2'), 'user', "…and the user's");
  await writer.allow('usr_2', new Date(Date.now() + 1000).toISOString());
  t.equal(await createDenyList(options).isDenied('usr_2', 'grant_2'), null, 'a later reactivation wins');
});

t.test('two gateways on the cluster: the limit and Idempotency-Key hold across them', async (t) => {
  const writes = await startWrites(t);
  const h = await harness(t, { REQUESTS_URL: writes.url });
  const options = {
    REDIS_CLUSTER_NODES: cluster.nodes,
    REDIS_COMMAND_TIMEOUT_MS: 10_000,
    CREDENTIAL_CONCURRENCY: 0,
  };
  const gateways = [await h.gateway(options), await h.gateway(options)];
  const urls: string[] = [];
  for (const gw of gateways) {
    await gw.app.listen({ host: '127.0.0.1', port: 0 });
    urls.push(`http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`);
  }
  const admin = h.identity.addUser('admin');
  const LIMIT = 37;
  const k = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: LIMIT, events: LIMIT } });
  const statuses = await Promise.all(
    Array.from({ length: 120 }, async (_, i) => {
      const res = await fetch(`${urls[i % 2]}/v1/requests`, { headers: bearer(k.raw) });
      await res.text();
      return res.status;
    }),
  );
  // The write stand-in answers every call it gets 201.
  t.equal(statuses.filter((s) => s === 201).length, LIMIT, `exactly ${LIMIT} admitted`);
  t.equal(statuses.filter((s) => s === 429).length, 120 - LIMIT, 'every other call refused');

  const writer = h.identity.addKey(admin, { plan: 'professional' });
  const key = `cluster-${uniqueName()}`;
  const send = (url: string) =>
    fetch(`${url}/v1/requests`, {
      method: 'POST',
      headers: { ...bearer(writer.raw), ...json(key) },
      body: JSON.stringify({ title: 'VPN down' }),
    });
  const before = writes.calls.length;
  const first = await send(urls[0]);
  const retry = await send(urls[1]);
  t.equal(first.status, 201);
  t.equal(retry.headers.get('idempotent-replayed'), 'true', 'the other gateway replays the answer');
  t.equal(await retry.text(), await first.text(), 'byte for byte');
  t.equal(writes.calls.length, before + 1, 'the write ran once');
  for (const [i, gw] of gateways.entries())
    t.equal(gw.rateLimiterStats?.failOpen, 0, `gateway ${i + 1}: no fail-open`);
});
