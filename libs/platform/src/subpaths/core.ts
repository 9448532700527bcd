// @support-desk/platform/core: what a use case may use. Plain TypeScript over the contracts,
// pino, jose, TypeBox and the OpenTelemetry API; it loads neither fastify, mongoose nor the
// NATS client (test/layers.test.ts proves it), so a use case cannot reach HTTP, the store or
// messaging through it. The ports use cases are handed are types here; their implementations
// live in the subpaths of their layer.
export * from '../address.js';
export type { AggregateDecision, AggregateWrite } from '../aggregate-write.js';
export * from '../batches.js';
export * from '../body-binding.js';
export * from '../config.js';
export * from '../cursor.js';
export * from '../duplicate-key.js';
export * from '../entity-tags.js';
export * from '../errors.js';
export * from '../event-presenter.js';
export * from '../events.js';
export * from '../housekeeping.js';
export * from '../human-bytes.js';
export * from '../identity-port.js';
export * from '../list-query.js';
export * from '../logger.js';
export * from '../outbox-entry.js';
export * from '../principal.js';
export * from '../public-origin.js';
export * from '../schema-problems.js';
export * from '../telemetry/trace-context.js';
export * from '../time-buckets.js';
export * from '../ttl-cache.js';
