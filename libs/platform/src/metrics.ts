import http from 'node:http';
import { Type } from '@sinclair/typebox';
import client from 'prom-client';
import type { Logger } from './logger.js';

/**
 * The process's Prometheus registry (prom-client: the maintained Prometheus client for Node, with
 * the default process and runtime metrics). One process runs one service, so every metric of
 * the platform and of the service registers here once, at module load; apps built in tests share it.
 */
export const metrics = new client.Registry();
client.collectDefaultMetrics({ register: metrics, eventLoopMonitoringPrecision: 100 });

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
    metrics.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
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
