import { writeFileSync } from 'node:fs';
import type { Figures } from './measure.js';

/**
 * What `BENCH_RESULTS_FILE` receives (JSON), read by the repository's `npm run bench` to print
 * one table of every figure. Runs are medians over `settings.rounds` alternating rounds; cpuUs
 * is CPU µs per call by process (gateway, upstream, autocannon, redis). Keep the names.
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
  /** Gateway + Redis CPU µs per call, limits on and off (steadier than req/s on a busy box). */
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
