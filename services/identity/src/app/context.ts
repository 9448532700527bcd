import type { NatsNames } from '@support-desk/contracts';
import type { EventContext, Logger } from '@support-desk/platform';
import type { IdentityConfig } from '../config.js';
import type { Store } from '../store/index.js';

/** What every use case needs. `kick` wakes the outbox relay after a write. */
export interface Deps {
  config: IdentityConfig;
  store: Store;
  names: NatsNames;
  logger: Logger;
  kick: () => void;
  /** Injected so tests can move time (code expiry, throttling windows). */
  clock: () => Date;
}

export type { EventContext };

/** The actor of deskctl commands run without `--as`: a fixed administrative identity. */
export const CLI_ACTOR = {
  id: 'deskctl',
  name: 'deskctl',
  email: 'deskctl@support-desk.local',
  role: 'admin' as const,
};

export function cliContext(actor = CLI_ACTOR): EventContext {
  return { actor, source: 'cli', requestId: null, userAgent: 'deskctl', ipAddress: null };
}
