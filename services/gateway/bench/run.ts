/**
 * `npm run bench -w @support-desk/gateway`: one run on loopback against the real NATS and Redis.
 * Compares, with autocannon: an authenticated GET straight to a service stand-in vs through the
 * gateway; the API-key path vs the JWT path; rate limiting on vs off. Prints req/s, p99 and ratios.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { natsNames, newId, type ResolveApiKeyReply, type UserSnapshot } from '@support-desk/contracts';
import {
  connectNats,
  counter,
  createPrincipalSigner,
  ensureStreams,
  histogram,
  serveRpc,
} from '@support-desk/platform';
import { freePort, testEnv, testPrincipalKeys, uniqueName } from '@support-desk/platform/testing';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
// BENCH_RATE=<req/s>: a fixed offered load instead of "as fast as possible", so the CPU µs per
// request of two builds can be compared at the same load on a noisy machine.
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

function child(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
  const c = fork(script, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    c.once('message', () => resolve(c));
    c.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function waitReady(url: string) {
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never became ready`);
}

/** CPU time (user + system, ms) a process has used so far; null where /proc is missing. */
function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, 100 Hz ticks
  } catch {
    return null;
  }
}

// Redis is a process on the same cores: its CPU per call is part of what rate limiting costs.
const redisInfo = new Redis(testEnv.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
async function redisCpuMs(): Promise<number | null> {
  try {
    const info = await redisInfo.info('cpu');
    const sum = ['used_cpu_sys', 'used_cpu_user']
      .map((k) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1] ?? Number.NaN))
      .reduce((a, b) => a + b, 0);
    return Number.isFinite(sum) ? sum * 1000 : null;
  } catch {
    return null;
  }
}

/**
 * One autocannon run; also prints the CPU each process spent per request (µs), which is what
 * decides the ratios on a box with fewer cores than busy processes.
 */
async function measure(
  name: string,
  url: string,
  headers: Record<string, string>,
  procs: Record<string, ChildProcess>,
  perCall?: () => Record<string, string>,
) {
  // Headers made for each request when they change per call (a principal assertion).
  const requests = perCall
    ? [{ setupRequest: (r: autocannon.Request) => ({ ...r, headers: { ...headers, ...perCall() } }) }]
    : undefined;
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 1, requests }); // warm-up
  const before = Object.fromEntries(Object.entries(procs).map(([k, c]) => [k, cpuMs(c.pid)]));
  const redisBefore = await redisCpuMs();
  const self = process.cpuUsage();
  const r = await autocannon({
    url,
    headers,
    connections: CONNECTIONS,
    duration: DURATION_S,
    overallRate: RATE,
    requests,
  });
  const selfUs = process.cpuUsage(self);
  const redisAfter = await redisCpuMs();
  const non2xx = r.non2xx + r.errors;
  const perReq = (ms: number) => Math.round((ms * 1000) / Math.max(1, r.requests.total));
  const cpuUs: Record<string, number> = {};
  for (const [k, c] of Object.entries(procs)) {
    const now = cpuMs(c.pid);
    const was = before[k];
    if (now !== null && was !== null) cpuUs[k] = perReq(now - was);
  }
  const row = { name, rps: Math.round(r.requests.average), p99: r.latency.p99, non2xx, cpuUs };
  const cpu = Object.entries(cpuUs).map(([k, us]) => `${k} ${us}`);
  cpu.push(`autocannon ${perReq((selfUs.user + selfUs.system) / 1000)}`);
  if (redisBefore !== null && redisAfter !== null) cpu.push(`redis ${perReq(redisAfter - redisBefore)}`);
  console.log(
    `${name.padEnd(34)} ${String(row.rps).padStart(7)} req/s   p99 ${String(row.p99).padStart(4)} ms   non-2xx ${non2xx}   CPU µs/req: ${cpu.join(', ')}`,
  );
  return row;
}

const names = natsNames(uniqueName('bench'));
const nc = await connectNats({ url: testEnv.natsUrl, name: 'bench' });
await ensureStreams(nc, names);

// Identity stand-in: one admin, one enterprise key, one OAuth client (limits high enough for no 429).
const user: UserSnapshot = {
  id: newId('user'),
  email: 'bench@example.com',
  name: 'Bench',
  role: 'admin',
  status: 'active',
  isVip: false,
  groups: [],
  updatedAt: new Date().toISOString(),
};
const keyId = newId('apiKey');
const apiKey = `sd_${keyId}_${uniqueName('secret')}`;
const limits = { general: 100_000_000, events: 100_000_000 };
serveRpc<{ key: string }, ResolveApiKeyReply>(nc, names.rpc.resolveApiKey, async ({ key }) =>
  key === apiKey
    ? {
        valid: true,
        keyId,
        owner: user,
        scopes: ['admin'],
        plan: 'enterprise',
        limits,
        allowlist: [],
        globalAllowlist: [],
        expiresAt: null,
      }
    : { valid: false, reason: 'unknown' },
);
serveRpc(nc, names.rpc.getUser, async () => ({ found: true, user }));
serveRpc(nc, names.rpc.getSettings, async () => ({ globalAllowlist: [] }));
const clientId = newId('oauthClient');
serveRpc(nc, names.rpc.getOAuthClient, async () => ({
  found: true,
  client: { clientId, name: 'bench', plan: 'enterprise', limits },
}));

const { privateKey, publicKey } = await generateKeyPair('ES256');
const kid = 'bench-1';
const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] });
const jwksServer = createServer((_req, res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(jwks),
);
await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
const issuer = 'http://bench.local';
const token = await new SignJWT({ client_id: clientId, scope: 'admin', jti: 'bench' })
  .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
  .setSubject(user.id)
  .setIssuer(issuer)
  .setAudience('support-desk-api')
  .setIssuedAt()
  .setExpirationTime('1h')
  .sign(privateKey);

const upstreamPort = await freePort();
const keys = testPrincipalKeys();
const upstream = await child(here('./upstream.js'), [String(upstreamPort)], {
  PRINCIPAL_VERIFY_KEYS: keys.verifyKeys,
});
const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;

/**
 * What a gateway call adds to its metrics, timed in this process with the same prom-client
 * metrics shapes: the HTTP histogram, an authentication outcome, a rate-limit decision and two
 * cache look-ups. Best of three rounds of 200 000.
 */
function metricUpdatesPerCall(): number {
  const http = histogram('bench_http_seconds', 'bench', ['method', 'route', 'status_class']);
  const auth = counter('bench_authentications_total', 'bench', ['credential', 'outcome']);
  const limits = counter('bench_rate_limit_total', 'bench', ['bucket', 'plan', 'decision']);
  const cache = counter('bench_cache_total', 'bench', ['cache', 'result']).labels({
    cache: 'keys',
    result: 'hit',
  });
  const n = 200_000;
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      http.observe({ method: 'GET', route: '/v1/requests', status_class: '2xx' }, 0.001);
      auth.inc({ credential: 'api_key', outcome: 'ok' });
      limits.inc({ bucket: 'general', plan: 'standard', decision: 'admitted' });
      cache.inc();
      cache.inc();
    }
    best = Math.min(best, Number(process.hrtime.bigint() - started) / n / 1000);
  }
  return best;
}

// An OTLP/HTTP sink for the tracing gateway's span batches: accepts and drops them.
const spanSink = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
});
await new Promise<void>((r) => spanSink.listen(0, '127.0.0.1', r));

/**
 * How a bench gateway traces: `none` as by default (the preload loaded, tracing off);
 * `context` with OTEL_TRACES_EXPORTER=none (trace context and ids, nothing recorded); `sampled`
 * exporting 10 % of new traces over OTLP.
 */
type Tracing = 'none' | 'context' | 'sampled';

const gateways: ChildProcess[] = [];
async function gateway(rateLimit: boolean, tracing: Tracing = 'none') {
  const port = await freePort();
  const env = {
    PORT: String(port),
    // Served, as in production (the bench's gateways would share the default port).
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    NATS_NAMESPACE: names.namespace,
    REDIS_URL: testEnv.redisUrl,
    NATS_URL: testEnv.natsUrl,
    REQUESTS_URL: upstreamUrl,
    IDENTITY_URL: upstreamUrl,
    AUDIT_URL: upstreamUrl,
    JWKS_URL: `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`,
    OAUTH_ISSUER: issuer,
    RATE_LIMIT_ENABLED: String(rateLimit),
    RATE_LIMIT_PREFIX: `${uniqueName('benchrl')}:`,
    PRINCIPAL_SIGNING_KEY: keys.signingKey,
    ...(tracing === 'context' ? { OTEL_TRACES_EXPORTER: 'none' } : {}),
    ...(tracing === 'sampled'
      ? {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(spanSink.address() as AddressInfo).port}`,
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0.1',
        }
      : {}),
  };
  // BENCH_GATEWAY_SERVER: another build's server.js (e.g. a worktree of an older commit) for A/B runs.
  const c = fork(process.env.BENCH_GATEWAY_SERVER ?? here('../src/server.js'), [], {
    env: { ...process.env, ...env },
    // BENCH_PROFILE=<dir>: V8 CPU profiles of the gateways, written when they exit.
    execArgv: [
      '--import',
      '@support-desk/platform/telemetry',
      ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : []),
    ],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  gateways.push(c);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url);
  return { url, c };
}

try {
  const { url: withLimits, c: limited } = await gateway(true);
  const { url: withoutLimits, c: unlimited } = await gateway(false);
  const { url: contextOnly, c: contextGateway } = await gateway(true, 'context');
  const { url: sampled, c: sampledGateway } = await gateway(true, 'sampled');
  // The direct call carries a principal assertion, as the gateway would send it: signed for each
  // call (an assertion is bound to its call and lives seconds), by this process.
  const sign = createPrincipalSigner(keys.signingKey);
  const principal = {
    userId: user.id,
    email: user.email,
    name: user.name,
    role: 'admin' as const,
    scopes: ['admin' as const],
    credential: { type: 'api_key' as const, id: keyId },
    clientIp: '127.0.0.1',
    userAgent: 'bench',
    requestId: 'bench',
  };
  const assertion = () => sign(principal, { audience: 'requests', method: 'GET', url: '/v1/requests' });
  console.log(
    `autocannon: ${CONNECTIONS} connections, ${DURATION_S} s per run, loopback, GET /v1/requests\n`,
  );
  const direct = await measure(
    'direct to the service',
    `${upstreamUrl}/v1/requests`,
    {},
    { upstream },
    () => ({ 'x-sd-principal': assertion() }),
  );
  const key = await measure(
    'gateway, API key, rate limit on',
    `${withLimits}/v1/requests`,
    {
      authorization: `Bearer ${apiKey}`,
    },
    { gateway: limited, upstream },
  );
  const jwt = await measure(
    'gateway, JWT, rate limit on',
    `${withLimits}/v1/requests`,
    {
      authorization: `Bearer ${token}`,
    },
    { gateway: limited, upstream },
  );
  const off = await measure(
    'gateway, API key, rate limit off',
    `${withoutLimits}/v1/requests`,
    {
      authorization: `Bearer ${apiKey}`,
    },
    { gateway: unlimited, upstream },
  );
  // Tracing's cost is a few tenths of the gateway's CPU and this machine's noise is as large: the
  // configurations take turns, several rounds, and the medians are compared.
  const rounds = Number(process.env.BENCH_TRACE_ROUNDS ?? 3);
  const runs: Record<'none' | 'context' | 'sampled', { rps: number; cpuUs: number }[]> = {
    none: [],
    context: [],
    sampled: [],
  };
  const targets = {
    none: { url: withLimits, c: limited },
    context: { url: contextOnly, c: contextGateway },
    sampled: { url: sampled, c: sampledGateway },
  };
  // Round 0 warms the traced gateways up (their first seconds are slower while the JIT settles)
  // and is not counted.
  for (let round = 0; round <= rounds; round++) {
    for (const tracing of ['none', 'context', 'sampled'] as const) {
      const { url, c } = targets[tracing];
      if (round === 0) {
        await autocannon({
          url: `${url}/v1/requests`,
          headers: { authorization: `Bearer ${apiKey}` },
          connections: CONNECTIONS,
          duration: 3,
        });
        continue;
      }
      const row = await measure(
        `tracing ${tracing}, round ${round}`,
        `${url}/v1/requests`,
        { authorization: `Bearer ${apiKey}` },
        { gateway: c, upstream },
      );
      runs[tracing].push({ rps: row.rps, cpuUs: row.cpuUs.gateway ?? Number.NaN });
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const tracingFigures = Object.fromEntries(
    Object.entries(runs).map(([k, rows]) => [
      k,
      { rps: median(rows.map((r) => r.rps)), cpuUs: median(rows.map((r) => r.cpuUs)) },
    ]),
  ) as Record<keyof typeof runs, { rps: number; cpuUs: number }>;
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.log('');
  console.log(`gateway / direct (API key, limits on):  ${ratio(key.rps, direct.rps)}  (aim ≥ 0.55)`);
  console.log(`JWT / API key:                          ${ratio(jwt.rps, key.rps)}  (aim ≥ 0.95)`);
  console.log(
    `rate limit on / off:                    ${ratio(key.rps, off.rps)}  (aim ≥ 0.90, i.e. ≤ 10% cost)`,
  );
  const { none, context: traceContext, sampled: traced } = tracingFigures;
  console.log(
    `tracing 10% sampled / none:             ${ratio(traced.rps, none.rps)}  (aim ≥ 0.95, i.e. ≤ 5% cost; medians of ${rounds} rounds)`,
  );
  console.log(`trace context only / none:              ${ratio(traceContext.rps, none.rps)}`);
  console.log(
    `gateway CPU µs per call (medians): none ${none.cpuUs}, context only ${traceContext.cpuUs}, 10% sampled ${traced.cpuUs}`,
  );
  console.log(`p99 ms: direct ${direct.p99}, key ${key.p99}, jwt ${jwt.p99}, limits off ${off.p99}`);
  const metricsUs = metricUpdatesPerCall();
  console.log(
    `metric updates per gateway call:        ${metricsUs.toFixed(2)} µs  ` +
      `(${((metricsUs / (key.cpuUs.gateway ?? Number.NaN)) * 100).toFixed(1)}% of the gateway's CPU per call; aim ≤ 5%)`,
  );
} finally {
  for (const g of gateways) g.kill('SIGTERM');
  upstream.kill('SIGTERM');
  redisInfo.disconnect();
  jwksServer.close();
  spanSink.close();
  await nc.drain();
}
