/**
 * `npm run bench -w @support-desk/gateway`: runs on loopback against the real NATS and Redis.
 * Compares, with autocannon: an authenticated GET straight to a service stand-in; through the
 * gateway's proxy routes only (no authentication, no limits); through the full gateway with an
 * API key, with a JWT, and with an API key and rate limiting off. The runs take turns over
 * `BENCH_ROUNDS` rounds (the order reversed every other round) and the medians are compared, as
 * are the tracing configurations after them. Prints req/s, latency, CPU per call and ratios;
 * with `BENCH_RESULTS_FILE` also writes them as JSON (`results.ts`).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { natsNames } from '@support-desk/contracts';
import { connectNats, provisionStreams } from '@support-desk/platform/messaging';
import {
  principalClaims,
  principalSigningKey,
  signClaims,
  signClaimsBatch,
} from '@support-desk/platform/core';
import { freePort, testEnv, testPrincipalKeys, uniqueName } from '@support-desk/platform/testing';
import autocannon from 'autocannon';
import { BENCH_ISSUER, startIdentityStandIn } from './identity-stand-in.js';
import {
  child,
  CONNECTIONS,
  DURATION_S,
  type Figures,
  measure,
  median,
  medianFigures,
  redisCpuReader,
  type Target,
  waitReady,
} from './measure.js';
import { metricUpdatesPerCall } from './metric-cost.js';
import { type GatewayBenchResults, printSummary, writeResults } from './results.js';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const TRACE_ROUNDS = Number(process.env.BENCH_TRACE_ROUNDS ?? 3);
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

const names = natsNames(uniqueName('bench'));
const nc = await connectNats({ url: testEnv.natsUrl, name: 'bench' });
await provisionStreams(nc, names);
const identity = await startIdentityStandIn(nc, names);
const redisCpu = redisCpuReader(testEnv.redisUrl);

const upstreamPort = await freePort();
const keys = testPrincipalKeys();
const upstream = await child(here('./upstream.js'), [String(upstreamPort)], {
  PRINCIPAL_VERIFY_KEYS: keys.verifyKeys,
});
const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;

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
/** A gateway process (or, `proxyOnly`, the gateway's proxy routes alone: `proxy-only.ts`). */
async function gateway(rateLimit: boolean, tracing: Tracing = 'none', proxyOnly = false) {
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
    WEBHOOKS_URL: upstreamUrl,
    JWKS_URL: identity.jwksUrl,
    OAUTH_ISSUER: BENCH_ISSUER,
    RATE_LIMIT_ENABLED: String(rateLimit),
    // One key's 32 connections are past the cap on calls in flight per credential (25): the bench
    // measures the path, not the cap's cheap 429s (which made its figures since issue 31 meaningless).
    CREDENTIAL_CONCURRENCY: '0',
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
  const server = proxyOnly
    ? here('./proxy-only.js')
    : (process.env.BENCH_GATEWAY_SERVER ?? here('../src/server.js'));
  const c = fork(server, [], {
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

const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;

try {
  const limited = await gateway(true);
  const unlimited = await gateway(false);
  const proxy = await gateway(false, 'none', true);
  // The direct call carries a principal assertion, as the gateway would send it: bound to its
  // call, living seconds, signed by this process. One signature per call by default (the
  // service's dearest case, and the reference of every earlier figure); BENCH_DIRECT_BATCH=<n>
  // signs n calls at a time, as the gateway does with the calls of one turn since issue 37.
  const signingKey = principalSigningKey(keys.signingKey);
  const directBatch = Math.max(1, Number(process.env.BENCH_DIRECT_BATCH ?? 1));
  let signed: string[] = [];
  const principal = {
    userId: identity.user.id,
    email: identity.user.email,
    name: identity.user.name,
    role: 'admin' as const,
    scopes: ['admin' as const],
    credential: { type: 'api_key' as const, id: identity.keyId },
    clientIp: '127.0.0.1',
    userAgent: 'bench',
    requestId: 'bench',
  };
  const assertion = () => {
    if (signed.length === 0) {
      const claims = JSON.stringify(
        principalClaims(principal, { audience: 'requests', method: 'GET', url: '/v1/requests' }),
      );
      signed =
        directBatch === 1
          ? [signClaims(signingKey, claims)]
          : signClaimsBatch(signingKey, Array<string>(directBatch).fill(claims));
    }
    return signed.pop()!;
  };
  const byKey = { authorization: `Bearer ${identity.apiKey}` };
  const targets = {
    direct: {
      name: 'direct to the service',
      url: `${upstreamUrl}/v1/requests`,
      procs: { upstream },
      perCall: () => ({ 'x-sd-principal': assertion() }),
    },
    proxyOnly: {
      name: 'gateway proxy only (no auth, no limits)',
      url: `${proxy.url}/v1/requests`,
      procs: { gateway: proxy.c, upstream },
    },
    gatewayKey: {
      name: 'gateway, API key, rate limit on',
      url: `${limited.url}/v1/requests`,
      headers: byKey,
      procs: { gateway: limited.c, upstream },
    },
    limitsOff: {
      name: 'gateway, API key, rate limit off',
      url: `${unlimited.url}/v1/requests`,
      headers: byKey,
      procs: { gateway: unlimited.c, upstream },
    },
    gatewayJwt: {
      name: 'gateway, JWT, rate limit on',
      url: `${limited.url}/v1/requests`,
      headers: { authorization: `Bearer ${identity.token}` },
      procs: { gateway: limited.c, upstream },
    },
  } satisfies Record<string, Target>;
  type Run = keyof typeof targets;
  console.log(
    `autocannon: ${CONNECTIONS} connections, ${DURATION_S} s per run, ${ROUNDS} rounds, loopback, GET /v1/requests\n`,
  );
  // Limits on and off run next to each other; every other round runs the list backwards, so
  // neither side always follows the same neighbour.
  const order = Object.keys(targets) as Run[];
  const runs = Object.fromEntries(order.map((k) => [k, [] as Figures[]])) as Record<Run, Figures[]>;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const run of round % 2 ? order : [...order].reverse()) {
      const target = { ...targets[run], name: `${targets[run].name}, round ${round}` };
      runs[run].push(await measure(target, redisCpu, round === 1 ? 3 : 0));
    }
  }
  const med = Object.fromEntries(order.map((k) => [k, medianFigures(runs[k])])) as Record<Run, Figures>;
  // Ratios are medians of each round's ratio: a round's runs are seconds apart, so they share
  // most of the machine's other load, which drifts over minutes.
  const pairedRatio = (a: Run, b: Run) => ratio(median(runs[a].map((r, i) => r.rps / runs[b][i].rps)), 1);
  const limiterCpu = (f: Figures) => (f.cpuUs.gateway ?? Number.NaN) + (f.cpuUs.redis ?? 0);

  // Tracing's cost is a few tenths of the gateway's CPU and this machine's noise is as large: the
  // configurations take turns, several rounds, and the medians are compared.
  let tracing: GatewayBenchResults['tracing'] = null;
  if (TRACE_ROUNDS > 0) {
    const tracers = {
      none: limited,
      context: await gateway(true, 'context'),
      sampled: await gateway(true, 'sampled'),
    };
    const traced: Record<Tracing, { rps: number; cpuUs: number }[]> = { none: [], context: [], sampled: [] };
    // Round 0 warms the traced gateways up (their first seconds are slower while the JIT settles)
    // and is not counted.
    for (let round = 0; round <= TRACE_ROUNDS; round++) {
      for (const kind of ['none', 'context', 'sampled'] as const) {
        const { url, c } = tracers[kind];
        if (round === 0) {
          await autocannon({
            url: `${url}/v1/requests`,
            headers: byKey,
            connections: CONNECTIONS,
            duration: 3,
          });
          continue;
        }
        const row = await measure(
          {
            name: `tracing ${kind}, round ${round}`,
            url: `${url}/v1/requests`,
            headers: byKey,
            procs: { gateway: c, upstream },
          },
          redisCpu,
          0,
        );
        traced[kind].push({ rps: row.rps, cpuUs: row.cpuUs.gateway ?? Number.NaN });
      }
    }
    const mid = (kind: Tracing) => ({
      rps: median(traced[kind].map((r) => r.rps)),
      cpuUs: median(traced[kind].map((r) => r.cpuUs)),
    });
    const [none, context, sampled] = [mid('none'), mid('context'), mid('sampled')];
    tracing = {
      none,
      context,
      sampled,
      ratios: {
        sampledOverNone: ratio(sampled.rps, none.rps),
        contextOverNone: ratio(context.rps, none.rps),
      },
    };
  }

  const { direct, proxyOnly, gatewayKey, gatewayJwt, limitsOff } = med;
  const results: GatewayBenchResults = {
    direct,
    proxyOnly,
    gatewayKey,
    gatewayJwt,
    limitsOff,
    ratios: {
      gatewayOverDirect: pairedRatio('gatewayKey', 'direct'),
      jwtOverKey: pairedRatio('gatewayJwt', 'gatewayKey'),
      limitsOnOverOff: pairedRatio('gatewayKey', 'limitsOff'),
      proxyOnlyOverDirect: pairedRatio('proxyOnly', 'direct'),
      gatewayOverProxyOnly: pairedRatio('gatewayKey', 'proxyOnly'),
    },
    limitCpuUs: {
      on: median(runs.gatewayKey.map(limiterCpu)),
      off: median(runs.limitsOff.map(limiterCpu)),
    },
    tracing,
    metricUpdatesUs: Math.round(metricUpdatesPerCall() * 100) / 100,
    settings: {
      rounds: ROUNDS,
      durationS: DURATION_S,
      connections: CONNECTIONS,
      rate: process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : null,
    },
  };
  printSummary(results);
  if (process.env.BENCH_RESULTS_FILE) writeResults(process.env.BENCH_RESULTS_FILE, results);
} finally {
  for (const g of gateways) g.kill('SIGTERM');
  upstream.kill('SIGTERM');
  redisCpu.close();
  identity.close();
  spanSink.close();
  await nc.drain();
}
