import { writeFileSync } from 'node:fs';
import type { Figures } from './measure.js';

/**
 * What `BENCH_RESULTS_FILE` receives (JSON), read by the repository's `npm run bench` to print
 * one table of every figure. Runs are medians over `settings.rounds` alternating rounds, ratios
 * the medians of each round's ratio; cpuUs is CPU µs per call by process (gateway, upstream,
 * autocannon, redis). Keep the names.
 */
export interface GatewayBenchResults {
  direct: Figures;
  /** The gateway's proxy routes and signed principal, without authentication or limits. */
  proxyOnly: Figures;
  /** The full gateway: API key, rate limiting on. */
  gatewayKey: Figures;
  /** The full gateway: OAuth access token (JWT), rate limiting on. */
  gatewayJwt: Figures;
  /** The full gateway: API key, rate limiting off. */
  limitsOff: Figures;
  ratios: {
    gatewayOverDirect: number;
    jwtOverKey: number;
    limitsOnOverOff: number;
    proxyOnlyOverDirect: number;
    gatewayOverProxyOnly: number;
  };
  /** Gateway + Redis CPU µs per call, limits on and off, medians of the rounds (steadier than req/s on a busy box). */
  limitCpuUs: { on: number; off: number };
  /** Medians of the tracing rounds, when run (`BENCH_TRACE_ROUNDS` > 0). */
  tracing: {
    none: { rps: number; cpuUs: number };
    context: { rps: number; cpuUs: number };
    sampled: { rps: number; cpuUs: number };
    ratios: { sampledOverNone: number; contextOverNone: number };
  } | null;
  metricUpdatesUs: number;
  settings: { rounds: number; durationS: number; connections: number; rate: number | null };
}

export function writeResults(file: string, results: GatewayBenchResults): void {
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}

const fixed = (x: number) => x.toFixed(2);

/** The medians and ratios, as the bench prints them after its runs. */
export function printSummary(r: GatewayBenchResults): void {
  const { ratios: q } = r;
  const row = (name: string, f: Figures) =>
    `${name.padEnd(34)} ${String(f.rps).padStart(7)} req/s   p50 ${String(f.p50).padStart(3)} ms   p99 ${String(f.p99).padStart(4)} ms   CPU µs/req: ${Object.entries(
      f.cpuUs,
    )
      .map(([k, us]) => `${k} ${us}`)
      .join(', ')}`;
  console.log(`\nmedians of ${r.settings.rounds} rounds:`);
  console.log(row('direct to the service', r.direct));
  console.log(row('gateway proxy only', r.proxyOnly));
  console.log(row('gateway, API key, limits on', r.gatewayKey));
  console.log(row('gateway, JWT, limits on', r.gatewayJwt));
  console.log(row('gateway, API key, limits off', r.limitsOff));
  console.log('');
  console.log(`gateway / direct (API key, limits on):  ${fixed(q.gatewayOverDirect)}  (aim ≥ 0.55)`);
  console.log(`proxy only / direct:                    ${fixed(q.proxyOnlyOverDirect)}`);
  console.log(`JWT / API key:                          ${fixed(q.jwtOverKey)}  (aim ≥ 0.95)`);
  console.log(
    `rate limit on / off:                    ${fixed(q.limitsOnOverOff)}  (aim ≥ 0.90, i.e. ≤ 10% cost)`,
  );
  console.log(
    `gateway + Redis CPU µs per call:        limits on ${r.limitCpuUs.on}, off ${r.limitCpuUs.off} ` +
      `(+${r.limitCpuUs.on - r.limitCpuUs.off})`,
  );
  if (r.tracing) {
    const t = r.tracing;
    console.log(
      `tracing 10% sampled / none:             ${fixed(t.ratios.sampledOverNone)}  (aim ≥ 0.95, i.e. ≤ 5% cost)`,
    );
    console.log(`trace context only / none:              ${fixed(t.ratios.contextOverNone)}`);
    console.log(
      `gateway CPU µs per call (medians): none ${t.none.cpuUs}, context only ${t.context.cpuUs}, 10% sampled ${t.sampled.cpuUs}`,
    );
  }
  console.log(
    `metric updates per gateway call:        ${r.metricUpdatesUs.toFixed(2)} µs  ` +
      `(${((r.metricUpdatesUs / (r.gatewayKey.cpuUs.gateway ?? Number.NaN)) * 100).toFixed(1)}% of the gateway's CPU per call; aim ≤ 5%)`,
  );
}
