// The clustered profile under faults (issue 36): two replicas of every service and two gateways
// on a three-server NATS JetStream cluster (streams at three replicas) and a Redis Cluster (three
// primaries, one replica each). Under steady creates through both gateways:
//   1. the NATS server leading the events stream is killed with SIGKILL and started again;
//   2. a Redis primary is killed with SIGKILL, its replica takes over, and it comes back;
//   3. every service restarts replica by replica (SIGTERM), as a rolling upgrade does;
//   4. the NATS server leading the events stream is cut off from the other two for 10 s (each NATS
//      server runs in a network namespace of its own the test makes; its clients still reach it),
//      then the partition heals.
// Afterwards every create the client saw acknowledged is readable, has exactly one
// `request.created` audit event and reached a webhook subscription at least once. The limiter's admissions while Redis fails over are measured
// against the limit (a comment: the bound BENCHMARKS.md records). Bounded: 4 workers, each phase
// as long as its fault, loopback only.
import { natsNames } from '@support-desk/contracts';
import { connectNats, jetstreamApi } from '@support-desk/platform/messaging';
import {
  startPrivateNatsCluster,
  startPrivateRedisCluster,
  startReceiver,
} from '@support-desk/platform/testing';
import t, { type Test } from 'tap';
import { cast, createKey } from '../src/actors.js';
import { type Api, type HttpResponse } from '../src/http.js';
import { Ledger } from '../src/ledger.js';
import { eventually, sleep, startStack } from '../src/stack.js';

const nats = await startPrivateNatsCluster(t, { partitionable: true });
const redis = await startPrivateRedisCluster(t);
const stack = await startStack(t, {
  replicas: 2,
  env: {
    NATS_URL: nats.url,
    NATS_STREAM_REPLICAS: '3',
    REDIS_URL: `redis://${redis.nodes.split(',')[0]}`,
    REDIS_CLUSTER_NODES: redis.nodes,
    SLA_MONITOR_ENABLED: 'false',
    UPSTREAM_TIMEOUT_MS: '5000',
  },
});
const { admin: adminActor, agent, viewer } = await cast(stack);
const admin = adminActor.api;
/** A credential with a small limit, to measure the limiter while Redis fails over. */
const LIMIT = 30;
const limitedKey = await createKey(
  stack,
  viewer.email,
  ['requests:read'],
  ['--plan', 'enterprise', '--rate-limit', String(LIMIT)],
);
const gateways = [0, 1].map((g) => stack.apiVia(g, agent.key));
/** Every `request.created` goes to a receiver on loopback too: deliveries must survive the faults. */
const receiver = await startReceiver(t);
const subscribed = await admin.post('/v1/webhooks', {
  url: receiver.url,
  events: ['request.created'],
  description: 'cluster faults',
});
if (subscribed.status !== 201) throw new Error(`subscribing: ${subscribed.status} ${subscribed.text}`);
const ledger = new Ledger();
const acked: string[] = [];
const failures: string[] = [];
/** When each create was acknowledged, for the seconds without one during a fault. */
const ackTimes: number[] = [];

/** The longest stretch from `from` to `to` without an acknowledged create (ms): what clients lost. */
function longestGap(from: number, to: number): number {
  let last = from;
  let gap = 0;
  for (const at of ackTimes) {
    if (at < from || at > to) continue;
    gap = Math.max(gap, at - last);
    last = at;
  }
  return Math.max(gap, to - last);
}

/** Waits (at most 60 s) until ten more creates are acknowledged: the system takes writes again. */
async function createsFlow(what: string): Promise<void> {
  const before = acked.length;
  await eventually(async () => acked.length > before + 10, { timeoutMs: 60_000, intervalMs: 250, what });
}

/** One call through a gateway, on to the other when the first refuses the connection. */
async function viaAnyGateway(n: number, send: (api: Api) => Promise<HttpResponse>): Promise<HttpResponse> {
  try {
    return await send(gateways[n % 2]);
  } catch (err) {
    if (!/ECONNREFUSED/.test(String((err as Error).message))) throw err;
    return send(gateways[(n + 1) % 2]);
  }
}

/** Each writer's pause between two creates. */
const WRITE_PAUSE_MS = 200;

/** Creates through both gateways until `stop()`; at most 4 in flight, at most 10 minutes. */
function steadyWrites() {
  let running = true;
  let n = 0;
  const deadline = Date.now() + 600_000;
  const worker = async (w: number) => {
    while (running && Date.now() < deadline) {
      const i = n++;
      try {
        const res = await viaAnyGateway(i, (api) =>
          api.post(
            '/v1/requests',
            { title: `cluster fault ${w}`, description: 'steady creates', priority: 'low' },
            { timeoutMs: 10_000 },
          ),
        );
        if (res.status === 201) {
          const id = res.json.data.id as string;
          acked.push(id);
          ackTimes.push(Date.now());
          ledger.record(id, 'request.created');
        } else failures.push(`${res.status} ${res.json?.error?.code}`);
      } catch (err) {
        failures.push(String((err as Error).message).slice(0, 80));
      }
      // Paced (about 20 creates a second in all): steady enough to see any second without an
      // acknowledged create, few enough that checking each afterwards stays short.
      await sleep(WRITE_PAUSE_MS);
    }
  };
  const workers = Promise.all([0, 1, 2, 3].map(worker));
  return async () => {
    running = false;
    await workers;
  };
}

/** How often each acknowledged create reached the webhook receiver, by request id. */
function deliveredIds(): Map<string, number> {
  const ids = new Map<string, number>();
  for (const r of receiver.received) {
    const id = (JSON.parse(r.body) as { snapshot?: { id?: string } }).snapshot?.id;
    if (id) ids.set(id, (ids.get(id) ?? 0) + 1);
  }
  return ids;
}

/** The events stream as one NATS server holds it: its leader (in that server's view) and last sequence. */
async function eventsStreamOn(server: string): Promise<{ leader?: string; lastSeq: number }> {
  const stream = natsNames(stack.run).eventsStream;
  const jsz = (await nats.monitoring(server, '/jsz?streams=true')) as {
    account_details?: {
      stream_detail?: { name: string; cluster?: { leader?: string }; state?: { last_seq?: number } }[];
    }[];
  } | null;
  for (const account of jsz?.account_details ?? [])
    for (const detail of account.stream_detail ?? [])
      if (detail.name === stream)
        return { leader: detail.cluster?.leader, lastSeq: detail.state?.last_seq ?? 0 };
  return { lastSeq: 0 };
}

/**
 * Cuts the server leading the events stream off from the other two for 10 s, then heals: the
 * fault that forces a leader election with the old leader still alive and still serving its
 * clients (they connect to any of the three), so a write it takes must not count until a majority
 * has it. What clients lost: the longest stretch without an acknowledged create from the cut until
 * creates flow again after the heal; how long after the heal its replica of the stream held every
 * message the majority had, and the stream the event of every acknowledged create (the writes stop
 * once creates flow again).
 */
async function partitionStreamLeader(t: Test, stop: () => Promise<void>) {
  const victim = await nats.streamLeader(natsNames(stack.run).eventsStream);
  if (!victim) throw new Error('the events stream has no leader');
  const clients = Number((await nats.monitoring(victim, '/connz'))?.num_connections ?? 0);
  const others = nats.servers.map((s) => s.name).filter((n) => n !== victim);
  const cut = Date.now();
  const failedBefore = failures.length;
  nats.partition(victim);
  try {
    await eventually(
      async () => {
        const leader = (await eventsStreamOn(others[0])).leader;
        return !!leader && leader !== victim;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the majority elected another stream leader' },
    );
    t.pass(
      `the events stream's leader ${victim} cut off; the other two elected ${(await eventsStreamOn(others[0])).leader}`,
    );
    await sleep(Math.max(0, 10_000 - (Date.now() - cut)));
  } finally {
    nats.heal();
  }
  const healed = Date.now();
  const majoritySeq = Math.max(...(await Promise.all(others.map(eventsStreamOn))).map((s) => s.lastSeq));
  await createsFlow('creates acknowledged after the partition healed');
  const gap = longestGap(cut, Date.now());
  const failed = failures.slice(failedBefore);
  await eventually(async () => (await eventsStreamOn(victim)).lastSeq >= majoritySeq, {
    timeoutMs: 60_000,
    intervalMs: 250,
    what: `the partitioned server's replica caught up with sequence ${majoritySeq}`,
  });
  const replicaCaughtUp = Date.now() - healed;
  // The writes stop here (the checks that follow count what was acknowledged until now): every
  // acknowledged create's event is in the stream once it holds as many `request.created` as there
  // are acknowledged creates (the relay de-duplicates by event id; the audit check below proves it
  // per request).
  await stop();
  const subject = natsNames(stack.run).eventSubject('request.created');
  /** When the writes stopped: how many acknowledged creates' events the stream did not hold yet. */
  let backlog: { after: number; missing: number } | undefined;
  const nc = await connectNats({ url: nats.url, name: `e2e-cluster-faults-${stack.run}` });
  try {
    const jsm = await jetstreamApi(nc);
    const stream = natsNames(stack.run).eventsStream;
    await eventually(
      async () => {
        const info = await jsm.streams.info(stream, { subjects_filter: subject });
        const held = info.state.subjects?.[subject] ?? 0;
        backlog ??= { after: Date.now() - healed, missing: acked.length - held };
        return held >= acked.length;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: `${acked.length} request.created events in the stream` },
    );
  } finally {
    await nc.close();
  }
  const inStream = Date.now() - healed;
  return { victim, clients, gap, failed, replicaCaughtUp, inStream, backlog };
}

t.test(
  'SIGKILL of the events stream leader and of a Redis primary, a rolling restart, a NATS partition: nothing lost',
  async (t) => {
    const stop = steadyWrites();
    // Also when an assertion throws: loops left running would keep the file alive until tap
    // killed it, and its servers with it unstopped.
    let probing = false;
    t.teardown(async () => {
      probing = false;
      await stop();
    });
    await sleep(2000);

    const stream = natsNames(stack.run).eventsStream;
    const leader = await nats.streamLeader(stream);
    const victim = nats.servers.find((s) => s.name === leader);
    t.ok(victim, `the events stream's leader: ${leader}`);
    const natsFault = Date.now();
    await victim!.crash();
    await createsFlow('creates acknowledged without the leader');
    const natsGap = longestGap(natsFault, Date.now());
    await victim!.start();
    await nats.ready();

    // The primary holding the limited key's slot (its hash tag `{key:<id>}`), killed; the cluster
    // says ok again once its replica has taken over. Meanwhile the limited key reads a request
    // again and again through both gateways: more than its limit in the window, so every
    // admission past LIMIT is the failover's (fail-open while no primary answers for the slot,
    // or counts the replica had not yet received).
    const slot = Number(
      await redis.cli(redis.servers[0].port, 'cluster', 'keyslot', `{key:${limitedKey.id}}`),
    );
    const nodes = await redis.cli(redis.servers[0].port, 'cluster', 'nodes');
    const owner = nodes
      .split('\n')
      .map((line) => line.split(' '))
      .find(
        (f) =>
          f[2]?.includes('master') &&
          f.slice(8).some((range) => {
            const [from, to = from] = range.split('-').map(Number);
            return slot >= from && slot <= to;
          }),
      )!;
    const primary = redis.servers.find((s) => owner[1].startsWith(`127.0.0.1:${s.port}@`))!;
    t.ok(primary, `the primary of slot ${slot}: ${owner[1]}`);
    let admitted = 0;
    let refused = 0;
    probing = true;
    const statuses: Record<number, number> = {};
    const probe = (async () => {
      for (let i = 0; probing && i < 2500; i++) {
        const res = await stack.apiVia(i % 2, limitedKey.key).get(`/v1/requests/${acked[0]}`);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 429) refused++;
        else if (res.status === 200) admitted++;
        await sleep(20);
      }
    })();
    await eventually(async () => refused > 0, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the limit reached',
    }).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(statuses)}`);
    });
    const redisFault = Date.now();
    await primary.crash();
    const othersOk = async () => {
      const infos = await Promise.all(
        redis.servers
          .filter((s) => s !== primary)
          .map((s) => redis.cli(s.port, 'cluster', 'info').catch(() => '')),
      );
      return infos.every((i) => i.includes('cluster_state:ok'));
    };
    await eventually(othersOk, { timeoutMs: 30_000, intervalMs: 250, what: 'the replica took over' });
    await createsFlow('creates acknowledged after the Redis failover');
    const redisGap = longestGap(redisFault, Date.now());
    await primary.start();
    probing = false;
    await probe;

    // Every service rolls at once, one replica at a time, as independent deployments upgrade.
    for (const replica of [(name: string) => !name.includes('#'), (name: string) => name.includes('#')])
      await Promise.all(
        stack.instances.filter(replica).map((instance) => stack.restart(instance, 'SIGTERM')),
      );
    await createsFlow('creates acknowledged after the rolling restart');
    const partition = await partitionStreamLeader(t, stop);
    t.comment(
      `limiter during the Redis failover: ${admitted} admitted against a limit of ${LIMIT} in the window` +
        ` (${Math.max(0, admitted - LIMIT)} over), ${refused} refused`,
    );
    t.ok(refused > 0, 'the limit held before and after the failover');
    t.comment(
      `longest stretch without an acknowledged create: ${(natsGap / 1000).toFixed(1)} s after the NATS` +
        ` leader's SIGKILL, ${(redisGap / 1000).toFixed(1)} s after the Redis primary's,` +
        ` ${(partition.gap / 1000).toFixed(1)} s from the NATS partition of ${partition.victim}` +
        ` (${partition.clients} client connections on it) until after it healed`,
    );
    t.comment(
      `failed calls from the NATS partition until creates flowed again: ${partition.failed.length}` +
        ` ${JSON.stringify([...new Set(partition.failed)])}`,
    );
    t.comment(
      `after the partition healed: its replica of the events stream had every message in` +
        ` ${(partition.replicaCaughtUp / 1000).toFixed(1)} s; the stream held the event of every` +
        ` acknowledged create ${(partition.inStream / 1000).toFixed(1)} s after the heal (when the` +
        ` writes stopped, ${((partition.backlog?.after ?? 0) / 1000).toFixed(1)} s after it, it lacked` +
        ` ${partition.backlog?.missing} of ${acked.length})`,
    );
    await stop();

    t.ok(acked.length > 20, `${acked.length} creates acknowledged (${failures.length} failed calls)`);
    let unreadable = 0;
    // Eight reads at a time.
    for (let i = 0; i < acked.length; i += 8)
      for (const res of await Promise.all(acked.slice(i, i + 8).map((id) => admin.get(`/v1/requests/${id}`))))
        if (res.status !== 200) unreadable++;
    t.equal(unreadable, 0, 'every acknowledged create is readable');
    await ledger.verify(t, admin, { timeoutMs: 60_000 });
    // At least once: a delivery whose answer was lost in a restart may come again, never not at all.
    const missing = () => acked.filter((id) => !deliveredIds().has(id));
    await eventually(() => missing().length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: 'a webhook delivery of every acknowledged create',
    }).catch(() => undefined);
    t.same(missing(), [], 'every acknowledged create reached the webhook subscription');
    const repeats = [...deliveredIds().values()].filter((n) => n > 1).length;
    t.comment(
      `webhook deliveries: ${receiver.received.length} for ${acked.length} creates (${repeats} delivered twice or more)`,
    );
  },
);
