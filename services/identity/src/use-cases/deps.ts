import type { NatsNames } from '@support-desk/contracts';
import type { EventContext, Logger } from '@support-desk/platform/core';
import type { IdentityConfig } from '../config.js';
import type { PasswordReference } from '../ldap/bind-password.js';
import type { DirectoryQuery, DirectorySnapshot, PageHook } from './directory.js';
import type { Repositories } from '../store/index.js';

/** What every use case needs: the repositories, and the service's settings, names, log and clock. */
export interface Deps extends Repositories {
  config: IdentityConfig;
  names: NatsNames;
  logger: Logger;
  /** Injected so tests can move time (code expiry, throttling windows). */
  clock: () => Date;
  /** Reads an LDAP directory into a snapshot (the ldapts reader; the composition root gives it). */
  readDirectory: (query: DirectoryQuery, password: string, onPage?: PageHook) => Promise<DirectorySnapshot>;
  /** The bind password an LDAP connection's settings point at. */
  bindPassword: (ref: PasswordReference) => Promise<string>;
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
