import type { NatsNames } from '@support-desk/contracts';
import type { Connection } from '@support-desk/platform/service';
import type { Logger } from '@support-desk/platform/core';
import { environmentSecret, type IdentityConfig } from './config.js';
import { bindPasswordReader } from './ldap/bind-password.js';
import { readDirectory } from './ldap/directory.js';
import { createRepositories } from './store/index.js';
import type { Deps } from './use-cases/deps.js';

/*
 * The use cases wired to one database connection: the one piece the service's composition
 * (composition.ts, which adds HTTP, RPC and background work) and the admin entry (admin/, which
 * deskctl runs) both build on, so an admin command runs exactly what the API runs.
 */
export interface IdentityDepsInput {
  config: IdentityConfig;
  logger: Logger;
  conn: Connection;
  names: NatsNames;
  /** The clock (tests move it). */
  clock?: () => Date;
  /** Where LDAP bind passwords named by variable are read (the process environment). */
  environment?: (name: string) => string | undefined;
}

/** The use cases' dependencies over one database connection (the service and the admin entry alike). */
export function identityDeps({ config, logger, conn, names, clock, environment }: IdentityDepsInput): Deps {
  const repositories = createRepositories(conn, {
    nameCacheTtlMs: config.IDENTITY_GROUP_CACHE_TTL_MS,
    listTotalTtlMs: config.LIST_TOTAL_CACHE_MS,
  });
  return {
    ...repositories,
    config,
    names,
    logger,
    clock: clock ?? (() => new Date()),
    readDirectory,
    bindPassword: bindPasswordReader(environment ?? environmentSecret(), config.LDAP_SECRETS_DIR),
  };
}
