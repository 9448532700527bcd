import type { NatsNames } from '@support-desk/contracts';
import {
  type Connection,
  createOutboxRelay,
  type Logger,
  type NatsConnection,
  type OutboxRelay,
} from '@support-desk/platform';
import type { Deps } from './app/context.js';
import type { IdentityConfig } from './config.js';
import { createStore, outboxModels } from './store/index.js';

export interface RuntimeOptions {
  config: IdentityConfig;
  conn: Connection;
  nc: NatsConnection | null;
  names: NatsNames;
  logger: Logger;
  clock?: () => Date;
}

/** Use-case dependencies wired to real connections, plus the outbox relay that drains them. */
export function createRuntime(opts: RuntimeOptions): { deps: Deps; relay: OutboxRelay | null } {
  const store = createStore(opts.conn);
  const relay = opts.nc
    ? createOutboxRelay({ nc: opts.nc, models: outboxModels(store), logger: opts.logger })
    : null;
  const deps: Deps = {
    config: opts.config,
    store,
    names: opts.names,
    logger: opts.logger,
    kick: () => relay?.kick(),
    clock: opts.clock ?? (() => new Date()),
  };
  return { deps, relay };
}
