import {
  type AdminSession,
  CLI_ACTOR,
  cliContext,
  type Deps,
  type EventContext,
  findUserByEmail,
  openAdminSession,
} from '@support-desk/identity/admin';
import { notFound } from '@support-desk/platform/core';
import { UsageError } from './args.js';
import { cliIo } from './io.js';

/*
 * What a command that runs needs, loaded only then (main.ts imports this module when a command
 * runs): identity's admin session on the store and NATS, and the acting admin.
 */

/** One database and NATS connection with identity's use cases on them (same variables as the service). */
export const openSession = (): Promise<AdminSession> =>
  openAdminSession({
    env: cliIo().env,
    name: 'deskctl',
    warn: (message) => cliIo().stderr.write(`deskctl: warning: ${message}\n`),
  });

/** The acting identity: `--as EMAIL` (an active admin) or the fixed deskctl actor. */
export async function actingContext(deps: Deps, asEmail: unknown): Promise<EventContext> {
  if (typeof asEmail !== 'string') return cliContext(CLI_ACTOR);
  const user = await findUserByEmail(deps, asEmail);
  if (!user) throw notFound(`User ${asEmail}`);
  if (user.role !== 'admin' || user.status !== 'active')
    throw new UsageError(`--as ${asEmail} is not an active admin`);
  return cliContext({ id: user._id, name: user.name, email: user.email, role: 'admin' });
}
