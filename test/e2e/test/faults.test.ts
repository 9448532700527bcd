// Rolling restarts and crashes lose nothing. Two replicas of every service; a steady mix of
// creates, updates, comments and uploads goes through the gateways (the driver, like a load
// balancer in front of them, tries the other gateway when one refuses the connection) while:
//   1. every service rolls (SIGTERM) one replica at a time, all services at once, as independent
//      deployments do: no client call may fail;
//   2. one replica of each service is killed with SIGKILL, all at once, and started again: calls
//      may fail while they are gone (502/503/504 in the envelope, never a hang past the upstream
//      timeout), but every write the client saw succeed is readable afterwards (an update as the
//      last one acknowledged) and has exactly one audit record, and nothing is dead-lettered by
//      audit or requests;
//   3. the NATS server is killed with SIGKILL and started again, and the store is paused with
//      SIGSTOP for a few seconds: the same holds.
// The stack runs on a private NATS server and store (this file kills them), Redis is shared.
// Bounded: each phase runs only as long as its faults, the driver has 4 workers, loopback only.
import { startPrivateMongo, startPrivateNats } from '@support-desk/platform/testing';
import t, { type Test } from 'tap';
import { cast } from '../src/actors.js';
import { type Api, type HttpResponse, request } from '../src/http.js';
import { eventually, sleep, startStack } from '../src/stack.js';

const nats = await startPrivateNats(t);
const store = await startPrivateMongo(t);
/**
 * The gateway's wait for a service (5 s here, 30 s by default): a call to a paused store or a
 * replica that died mid-call is answered 504 by then. The client waits a little longer, so a call
 * that hangs past the bound shows as a duration, not a client timeout.
 */
const UPSTREAM_TIMEOUT_MS = 5000;
/** Before the upstream call, the gateway may wait for identity (RPC_TIMEOUT_MS, 2 s) and Redis. */
const HANG_BOUND_MS = UPSTREAM_TIMEOUT_MS + 2000 + 1000;
const CLIENT_TIMEOUT_MS = HANG_BOUND_MS + 2000;
const stack = await startStack(t, {
  replicas: 2,
  env: {
    NATS_URL: nats.url,
    MONGO_URL: store.url,
    SHUTDOWN_DRAIN_MS: '1000',
    SLA_MONITOR_ENABLED: 'false',
    UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
  },
});
const { admin, agent } = await cast(stack);
const gateways = [0, 1].map((g) => stack.apiVia(g, agent.key));

/** What the driver saw succeed, to check afterwards. */
interface Acked {
  requests: Map<
    string,
    {
      comments: Set<string>;
      attachments: Set<string>;
      /** Each priority update in order, and whether the client saw it succeed. */
      updates: PriorityUpdate[];
      attempts: Record<string, number>;
    }
  >;
}

interface PhaseFigures {
  attempted: number;
  acknowledged: number;
  failed: number;
  failures: string[];
  /** The longest call, from the first gateway tried to the answer (or error). */
  slowestMs: number;
}

/**
 * A failed call's answer: 502 SERVER_ERROR (no replica could be reached), 503 SERVICE_UNAVAILABLE
 * (a service without its store or NATS, or identity unreachable for a credential), or 504
 * SERVICE_UNAVAILABLE (no answer within UPSTREAM_TIMEOUT_MS: the store paused), always the envelope.
 */
const ENVELOPE_FAILURE = '(502 SERVER_ERROR|503 SERVICE_UNAVAILABLE|504 SERVICE_UNAVAILABLE)';

// Only a connection that was never made is safe to send elsewhere (refused, or reset while
// connecting); one reset later may have reached a service.
const CONNECTION_REFUSED = /ECONNREFUSED|connect ECONNRESET/;

/**
 * The gateways' readiness, checked every 100 ms as a load balancer's health checks (or
 * Kubernetes' endpoints) do: a gateway draining before its restart answers `/readyz` with 503 for
 * SHUTDOWN_DRAIN_MS (1 s here) and gets no new calls meanwhile. Without it a call can reach the
 * kernel's accept queue of a listener that is closing, and is reset with no answer (`read
 * ECONNRESET`), which no client can tell from a call that failed after it was served.
 */
const gatewayReady = [true, true];
let watchingReadiness = true;
const readinessWatch = (async () => {
  const deadline = Date.now() + 600_000;
  while (watchingReadiness && Date.now() < deadline) {
    await Promise.all(
      gateways.map(async (api, g) => {
        const res = await request(`${api.root}/readyz`, { timeoutMs: 1000 }).catch(() => null);
        gatewayReady[g] = res?.status === 200;
      }),
    );
    await sleep(100);
  }
})();
t.teardown(async () => {
  watchingReadiness = false;
  await readinessWatch;
});

/**
 * One call through a gateway (a ready one first), on to the other when the first refuses the
 * connection.
 */
async function viaAnyGateway(n: number, send: (api: Api) => Promise<HttpResponse>): Promise<HttpResponse> {
  let last: unknown;
  const order = [n % 2, (n + 1) % 2];
  if (!gatewayReady[order[0]] && gatewayReady[order[1]]) order.reverse();
  for (const g of order) {
    try {
      return await send(gateways[g]);
    } catch (err) {
      last = err;
      if (!CONNECTION_REFUSED.test(String((err as Error).message ?? err))) throw err;
    }
  }
  throw last;
}

/** A phase's figures for the log: failures counted by kind (`update: 504 SERVICE_UNAVAILABLE`). */
function summary(figures: PhaseFigures) {
  const kinds: Record<string, number> = {};
  for (const f of figures.failures) kinds[f.slice(0, 80)] = (kinds[f.slice(0, 80)] ?? 0) + 1;
  return { ...figures, failures: kinds };
}

/**
 * A priority update as the client saw it: acknowledged, or failed; a failure is `inFlight` when
 * the call may still be running in a service after the client got its answer (the client's
 * gateway died mid-call, or answered 504 while the service was still at it), so it may land
 * after the client's next update.
 */
interface PriorityUpdate {
  priority: string;
  acked: boolean;
  inFlight: boolean;
}

/** Four workers, each looping create → update → comment → upload until told to stop. */
function drive(acked: Acked) {
  const figures: PhaseFigures = { attempted: 0, acknowledged: 0, failed: 0, failures: [], slowestMs: 0 };
  let running = true;
  let n = 0;
  const step = async (
    what: string,
    send: (api: Api) => Promise<HttpResponse>,
    ok: number,
    outcome: { inFlight: boolean } = { inFlight: false },
  ) => {
    figures.attempted++;
    const i = n++;
    const started = Date.now();
    try {
      const res = await viaAnyGateway(i, send);
      if (res.status === ok) {
        figures.acknowledged++;
        return res;
      }
      figures.failed++;
      outcome.inFlight = res.status === 504;
      // An answer that is not the envelope shows as such, and fails the phase's check.
      const code = res.json?.success === false ? res.json.error?.code : undefined;
      figures.failures.push(
        `${what}: ${res.status} ${typeof code === 'string' ? code : `not the envelope: ${res.text.slice(0, 120)}`}`,
      );
    } catch (err) {
      figures.failed++;
      figures.failures.push(`${what}: ${(err as Error).message}`);
      outcome.inFlight = !/ECONNREFUSED/.test(String((err as Error).message));
    } finally {
      figures.slowestMs = Math.max(figures.slowestMs, Date.now() - started);
    }
    return null;
  };
  const worker = async (w: number) => {
    while (running) {
      const created = await step(
        'create',
        (api) =>
          api.post(
            '/v1/requests',
            { title: `fault ${w}`, description: 'steady mix', priority: 'low' },
            { timeoutMs: CLIENT_TIMEOUT_MS },
          ),
        201,
      );
      if (!created) continue;
      const id = created.json.data.id as string;
      // What was tried, acknowledged or not: a call the client saw fail may still have landed.
      const attempts = {
        'request.priority_changed': 2,
        'request.comment_added': 1,
        'request.attachment_added': 1,
      };
      const record = {
        comments: new Set<string>(),
        attachments: new Set<string>(),
        updates: [] as PriorityUpdate[],
        attempts,
      };
      acked.requests.set(id, record);
      for (const priority of ['high', 'medium']) {
        const outcome = { inFlight: false };
        const updated = await step(
          'update',
          (api) => api.patch(`/v1/requests/${id}`, { priority }, { timeoutMs: CLIENT_TIMEOUT_MS }),
          200,
          outcome,
        );
        record.updates.push({ priority, acked: updated !== null, inFlight: outcome.inFlight });
      }
      const comment = await step(
        'comment',
        (api) =>
          api.post(`/v1/requests/${id}/comments`, { content: 'noted' }, { timeoutMs: CLIENT_TIMEOUT_MS }),
        201,
      );
      if (comment) record.comments.add(comment.json.data.id);
      const upload = await step(
        'upload',
        (api) =>
          api.upload(`/v1/requests/${id}/attachments`, 'log.txt', Buffer.from(`log of ${id}`), undefined, {
            timeoutMs: CLIENT_TIMEOUT_MS,
          }),
        201,
      );
      if (upload) record.attachments.add(upload.json.data.id);
    }
  };
  const workers = [0, 1, 2, 3].map(worker);
  return {
    figures,
    async stop() {
      running = false;
      await Promise.all(workers);
      return figures;
    },
  };
}

/**
 * The priority a request may have now: the last acknowledged update's, or a later update's (a
 * call the client saw fail may still have landed); with none acknowledged, any, or the first.
 * An earlier update that was still in flight when the client moved on may also have landed last.
 */
function possiblePriorities(updates: PriorityUpdate[]): string[] {
  const lastAcked = updates.map((u) => u.acked).lastIndexOf(true);
  const from = updates.slice(Math.max(lastAcked, 0)).map((u) => u.priority);
  const late = updates.slice(0, Math.max(lastAcked, 0)).filter((u) => u.inFlight);
  return [...(lastAcked < 0 ? ['low'] : []), ...from, ...late.map((u) => u.priority)];
}

/** Requests checked at once: the check reads each request and its audit records. */
const VERIFY_CONCURRENCY = 8;

/** Runs `check` on every item, at most `concurrency` at a time. */
async function inParallel<T>(items: T[], concurrency: number, check: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await check(items[next++]);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

/**
 * Every acknowledged write is readable (an update as the last one acknowledged), with exactly one
 * audit record; nothing dead-lettered by audit or by requests' read model.
 */
async function verify(t: Test, acked: Acked) {
  let lost = 0;
  let duplicated = 0;
  let missingEvents = 0;
  let staleUpdates = 0;
  /** Requests whose last update to land was one the client saw fail (it was still in flight). */
  let failedButLanded = 0;
  await inParallel([...acked.requests], VERIFY_CONCURRENCY, async ([id, record]) => {
    const read = await admin.api.get(`/v1/requests/${id}`);
    if (read.status !== 200) {
      lost++;
      return;
    }
    const comments = new Set((read.json.data.comments as { id: string }[]).map((c) => c.id));
    const attachments = new Set((read.json.data.attachments as { id: string }[]).map((a) => a.id));
    const priority = read.json.data.priority as string;
    if (!possiblePriorities(record.updates).includes(priority)) {
      staleUpdates++;
      t.comment(`${id}: priority ${priority} after ${JSON.stringify(record.updates)}`);
    } else if (record.updates.some((u) => u.inFlight && u.priority === priority && !u.acked)) {
      failedButLanded++;
    }
    for (const c of record.comments) if (!comments.has(c)) lost++;
    for (const a of record.attachments) if (!attachments.has(a)) lost++;
    const expected: Record<string, number> = {
      'request.created': 1,
      'request.comment_added': record.comments.size,
      'request.attachment_added': record.attachments.size,
      'request.priority_changed': record.updates.filter((u) => u.acked).length,
    };
    const counts = await eventually(
      async () => {
        const res = await admin.api.get(`/v1/requests/${id}/events?limit=100`);
        if (res.status !== 200) return null;
        const c: Record<string, number> = {};
        for (const e of res.json.data.events as { type: string }[]) c[e.type] = (c[e.type] ?? 0) + 1;
        return Object.entries(expected).every(([type, n]) => (c[type] ?? 0) >= n) ? c : null;
      },
      { timeoutMs: 30_000, what: `the audit records of ${id}` },
    ).catch(() => null);
    if (!counts) {
      missingEvents++;
      return;
    }
    // More records than calls made would be a duplicate (an unacknowledged call may have landed).
    const most: Record<string, number> = { 'request.created': 1, ...record.attempts };
    for (const [type, n] of Object.entries(most)) if ((counts[type] ?? 0) > n) duplicated++;
  });
  const deadLetters = {
    audit: (await stack.deskctlJson(['dead-letters', 'list', '--service', 'audit'])).pagination
      .total as number,
    requests: (await stack.deskctlJson(['dead-letters', 'list', '--service', 'requests'])).pagination
      .total as number,
  };
  t.equal(lost, 0, 'no acknowledged write lost');
  t.equal(staleUpdates, 0, 'every request has the priority of its last acknowledged update');
  t.equal(missingEvents, 0, 'no event lost');
  t.equal(duplicated, 0, 'no event duplicated');
  t.same(deadLetters, { audit: 0, requests: 0 }, 'nothing dead-lettered, by audit or by requests');
  return { lost, staleUpdates, failedButLanded, missingEvents, duplicated, deadLettered: deadLetters };
}

t.test('a rolling restart of every process fails no client call', async (t) => {
  const acked: Acked = { requests: new Map() };
  const driver = drive(acked);
  await sleep(1000);
  // As independent deployments do: every service rolls at once, one replica at a time, so each
  // keeps a replica serving throughout (ten restarts one after another outlast tap's file timeout).
  for (const replica of [(name: string) => !name.includes('#'), (name: string) => name.includes('#')])
    await Promise.all(stack.instances.filter(replica).map((instance) => stack.restart(instance, 'SIGTERM')));
  await sleep(1000);
  const figures = await driver.stop();
  t.ok(figures.acknowledged > 50, `${figures.acknowledged} writes acknowledged of ${figures.attempted}`);
  t.same(figures.failures, [], 'no client call failed');
  t.ok(figures.slowestMs < HANG_BOUND_MS, `no call hung (slowest ${figures.slowestMs} ms)`);
  const outcome = await verify(t, acked);
  console.log(`# rolling restart: ${JSON.stringify({ ...summary(figures), ...outcome })}`);
});

t.test('a replica of each service killed: acknowledged writes survive, once each', async (t) => {
  const acked: Acked = { requests: new Map() };
  const driver = drive(acked);
  await sleep(1000);
  // All at once, as a lost node takes a replica of each: every service keeps its first replica.
  await Promise.all(
    ['identity', 'requests', 'audit', 'webhooks', 'gateway'].map((service) =>
      stack.restart(`${service}#2`, 'SIGKILL'),
    ),
  );
  await sleep(1000);
  const figures = await driver.stop();
  t.ok(figures.acknowledged > 50, `${figures.acknowledged} writes acknowledged of ${figures.attempted}`);
  // A failure is an answer in the envelope, or the connection to the gateway that was killed.
  for (const f of figures.failures)
    t.match(
      f,
      new RegExp(`: (${ENVELOPE_FAILURE}|socket hang up|(read |connect )?ECONNRESET)`),
      `a failure: ${f}`,
    );
  t.ok(
    figures.slowestMs < HANG_BOUND_MS,
    `no call hung past the upstream timeout (slowest ${figures.slowestMs} ms)`,
  );
  const outcome = await verify(t, acked);
  console.log(`# crashes: ${JSON.stringify({ ...summary(figures), ...outcome })}`);
});

t.test('NATS killed and the store paused: acknowledged writes survive, once each', async (t) => {
  const acked: Acked = { requests: new Map() };
  const driver = drive(acked);
  await sleep(1000);
  await nats.crash();
  await sleep(2000);
  await nats.start();
  await sleep(2000);
  store.pause(true);
  await sleep(3000);
  store.pause(false);
  await sleep(2000);
  const figures = await driver.stop();
  t.ok(figures.acknowledged > 20, `${figures.acknowledged} writes acknowledged of ${figures.attempted}`);
  for (const f of figures.failures)
    t.match(f, new RegExp(`: ${ENVELOPE_FAILURE}$`), `a failure is an answer in the envelope: ${f}`);
  t.ok(
    figures.slowestMs < HANG_BOUND_MS,
    `no call hung past the upstream timeout (slowest ${figures.slowestMs} ms)`,
  );
  const outcome = await verify(t, acked);
  console.log(`# NATS and store: ${JSON.stringify({ ...summary(figures), ...outcome })}`);
});
