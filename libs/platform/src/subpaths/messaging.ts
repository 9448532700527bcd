// @support-desk/platform/messaging: NATS and JetStream: connections, streams, consumers and
// their dead letters, the outbox relay, request-reply, message signing and its keys, trace
// propagation over NATS headers. A service's events/ and its composition use it.
export * from '../config-changes.js';
export * from '../consumer.js';
export * from '../deadletters.js';
export * from '../event-decoder.js';
export * from '../message-signing.js';
export * from '../nats.js';
export * from '../outbox-relay.js';
export * from '../rpc.js';
export * from '../service-keys.js';
export * from '../streams.js';
export * from '../telemetry/propagation.js';
