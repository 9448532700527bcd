// @support-desk/platform/service: wiring one process: runService, its connections (the store
// and NATS connect here or in messaging), graceful shutdown, trace flushing, aggregate locks.
export { useStoreLocks } from '../aggregate-lock.js';
export {
  connectMongo,
  type Connection,
  ensureIndexes,
  isDatabaseUnreachable,
  type MongoOptions,
  pingMongo,
} from '../mongo.js';
export * from '../service.js';
export * from '../shutdown.js';
export * from '../telemetry/flush.js';
