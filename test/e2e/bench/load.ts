/**
 * The stack bench's load runs: autocannon against the gateway, first as fast as it answers
 * (32 connections), then at half that rate, where the latency says what a caller sees on a stack
 * that is busy but not saturated (at full load the latency is mostly queueing).
 */
import autocannon from 'autocannon';

export const CONNECTIONS = 32;

/** One call autocannon makes: the path and body may change per call (many ids, fresh titles). */
export interface CallShape {
  method: 'GET' | 'POST' | 'PATCH';
  /** Called for every request autocannon sends; `context` is the connection's (one call in flight). */
  next(context: Record<string, unknown>): { path: string; body?: string; headers?: Record<string, string> };
  /** Called with every answer, on the connection's `context` (what a conditional call tracks). */
  onResponse?(status: number, headers: Record<string, string>, context: Record<string, unknown>): void;
}

export interface RunFigures {
  /** Answers per second (2xx and others alike: `non2xx` says how many were not 2xx). */
  rps: number;
  p50: number;
  p99: number;
  calls: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Answers per HTTP status: conditional calls expect 304 or 412 as well as 2xx. */
  statuses: Record<string, number>;
}

/** Max throughput and the latency at half of it, as the table prints them. */
export interface PhaseFigures {
  maxRps: number;
  /** p50/p99 at the max, for reference (mostly queueing). */
  atMax: RunFigures;
  /** The offered rate of the second run: half of `maxRps`. */
  halfRate: number;
  atHalf: RunFigures;
}

function figures(r: autocannon.Result): RunFigures {
  return {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    calls: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statuses: Object.fromEntries(
      Object.entries(r.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)]),
    ),
  };
}

export async function load(
  origin: string,
  token: string,
  shape: CallShape,
  seconds: number,
  overallRate?: number,
): Promise<RunFigures> {
  const result = await autocannon({
    url: origin,
    connections: CONNECTIONS,
    duration: seconds,
    ...(overallRate ? { overallRate } : {}),
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'content-type': 'application/json',
    },
    requests: [
      {
        method: shape.method,
        // Every call gets its own path/body (autocannon otherwise repeats one request).
        setupRequest: (request, context) => {
          const { path, body, headers } = shape.next(context as Record<string, unknown>);
          return {
            ...request,
            path,
            ...(body === undefined ? {} : { body }),
            ...(headers ? { headers: { ...request.headers, ...headers } } : {}),
          };
        },
        ...(shape.onResponse
          ? {
              onResponse: (status: number, _body: string, context: unknown, headers: unknown) =>
                shape.onResponse?.(
                  status,
                  headers as Record<string, string>,
                  context as Record<string, unknown>,
                ),
            }
          : {}),
      },
    ],
  });
  return figures(result);
}

/** A run at full load, then one at half its rate. */
export async function phase(
  origin: string,
  token: string,
  shape: CallShape,
  seconds: number,
): Promise<PhaseFigures> {
  const atMax = await load(origin, token, shape, seconds);
  const halfRate = Math.max(1, Math.round(atMax.rps / 2));
  const atHalf = await load(origin, token, shape, seconds, halfRate);
  return { maxRps: atMax.rps, atMax, halfRate, atHalf };
}

export function describeRun(name: string, r: RunFigures, rate?: number): string {
  const offered = rate === undefined ? 'max'.padStart(8) : `${rate}/s`.padStart(8);
  const bad = r.non2xx + r.errors + r.timeouts;
  return (
    `${name.padEnd(40)} ${offered}  ${String(r.rps).padStart(6)} req/s  ` +
    `p50 ${String(r.p50).padStart(5)} ms  p99 ${String(r.p99).padStart(5)} ms` +
    (bad
      ? `  (statuses ${Object.entries(r.statuses)
          .map(([code, count]) => `${code}×${count}`)
          .join(' ')}; errors ${r.errors}, timeouts ${r.timeouts})`
      : '')
  );
}
