import http from 'node:http';
import { Type } from 'typebox';
import client from 'prom-client';
import type { Logger } from './logger.js';

/**
 * The process's Prometheus registry (prom-client: the maintained Prometheus client for Node, with
 * the default process and runtime metrics). One process runs one service, so every metric of
 * the platform and of the service registers here once, at module load; apps built in tests share it.
 * An OpenMetrics registry: prom-client keeps exemplars only on those (`renderMetrics` still serves
 * the Prometheus text format to a scraper that does not ask for OpenMetrics).
 */
export const metrics = new client.Registry<client.RegistryContentType>();
metrics.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE);
// The event-loop delay histogram wakes the process once per `eventLoopMonitoringPrecision` ms even
// at idle: alone in an idle node process 30 ms of CPU in 30 s at 100 ms, 9 ms at 250 ms (214 ms at
// prom-client's default 10 ms; BENCHMARKS.md, issue 37). 250 ms, the saturation check's period too,
// still samples a stalled loop every time it runs.
client.collectDefaultMetrics({ register: metrics, eventLoopMonitoringPrecision: 250 });

export { client as prometheus };

/**
 * Buckets (seconds) for the platform's duration histograms: fine below a millisecond for the
 * gateway's own work, and around 100 ms for a store call or an upstream service.
 */
export const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** `METRICS_PORT`: where a service serves /metrics, a port the gateway never proxies; 0 turns it off. */
export const metricsConfig = (defaultPort: number) => ({
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: defaultPort }),
});

export const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
  new client.Counter<L>({ name, help, labelNames, registers: [metrics] });

/** A histogram of durations in seconds (`DURATION_BUCKETS` unless the measure needs other ones). */
export const histogram = <L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  buckets: readonly number[] = DURATION_BUCKETS,
) => new client.Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers: [metrics] });

/**
 * A duration histogram whose observations keep the trace they were made in: each bucket holds the
 * trace id of its latest observation as an OpenMetrics exemplar (`# {trace_id="…"}`), which links
 * a latency panel to the trace behind a slow call. Observe it with `observeInTrace`.
 */
export const tracedHistogram = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
  new client.Histogram<L>({
    name,
    help,
    labelNames,
    buckets: DURATION_BUCKETS,
    registers: [metrics],
    enableExemplars: true,
  });

/** One observation of a `tracedHistogram`, with `traceId` as its exemplar (none outside a trace). */
export function observeInTrace<L extends string>(
  histogram: client.Histogram<L>,
  labels: Partial<Record<L, string | number>>,
  seconds: number,
  traceId: string | null | undefined,
): void {
  // The exemplar's label is not one of the histogram's (prom-client types it as if it were).
  const exemplarLabels = (traceId ? { trace_id: traceId } : {}) as Partial<Record<L, string>>;
  histogram.observe({ labels, value: seconds, exemplarLabels });
}

/** A gauge read at scrape time; a failing read leaves the series out of that scrape. */
export function gauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  collect?: (set: (labels: Partial<Record<L, string>>, value: number) => void) => Promise<void> | void,
) {
  return new client.Gauge<L>({
    name,
    help,
    labelNames,
    registers: [metrics],
    ...(collect
      ? {
          async collect() {
            this.reset();
            await collect((labels, value) => this.set(labels, value));
          },
        }
      : {}),
  });
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

const PROMETHEUS_TEXT = client.Registry.PROMETHEUS_CONTENT_TYPE;
const OPENMETRICS_TEXT = client.Registry.OPENMETRICS_CONTENT_TYPE;

/** Whether a scraper's `Accept` takes OpenMetrics (Prometheus asks for it first unless told not to). */
export const acceptsOpenMetrics = (accept: string | undefined) =>
  (accept ?? '')
    .split(',')
    .some(
      (part) => /^\s*application\/openmetrics-text\b/i.test(part) && !/;\s*q=0(\.0*)?\s*(;|$)/i.test(part),
    );

let rendering: Promise<unknown> = Promise.resolve();

/**
 * The registry as text: OpenMetrics (which alone carries exemplars) when asked for, the Prometheus
 * text format otherwise. prom-client renders by the registry's current format, and renames every
 * counter in place for OpenMetrics (`x_total` → `x`): renderings take turns, and after each one
 * the registry is OpenMetrics again with its counters' names put back.
 */
export function renderMetrics(openMetrics: boolean): Promise<{ text: string; contentType: string }> {
  const run = rendering.then(async () => {
    const named = metrics.getMetricsAsArray() as unknown as { name: string }[];
    const names = named.map((metric) => metric.name);
    const contentType = openMetrics ? OPENMETRICS_TEXT : PROMETHEUS_TEXT;
    metrics.setContentType(contentType);
    try {
      return { text: await metrics.metrics(), contentType };
    } finally {
      metrics.setContentType(OPENMETRICS_TEXT);
      named.forEach((metric, i) => (metric.name = names[i]));
    }
  });
  rendering = run.catch(() => undefined);
  return run;
}

/** Serves `GET /metrics` (and nothing else) on its own listener. */
export async function startMetricsServer({
  host,
  port,
  logger,
}: {
  host: string;
  port: number;
  logger: Logger;
}): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try GET /metrics\n');
      return;
    }
    renderMetrics(acceptsOpenMetrics(req.headers.accept)).then(
      ({ text, contentType }) => res.writeHead(200, { 'content-type': contentType }).end(text),
      (err) => {
        logger.error({ err }, 'metrics collection failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  logger.info({ port: bound }, 'metrics listening');
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
