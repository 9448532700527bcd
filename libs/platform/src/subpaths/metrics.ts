// @support-desk/platform/metrics: the Prometheus registry and its metric kinds (prom-client
// only), usable from every layer, use cases included.
export * from '../metrics.js';
