import type { NatsNames, Principal } from '@support-desk/contracts';
import {
  contextFromPrincipal,
  type EventContext,
  type Logger,
  type OutboxRelay,
  validationError,
} from '@support-desk/platform';
import { AppError } from '@support-desk/platform';
import type { AttachmentFiles } from '../store/files.js';
import type { RequestModel } from '../store/requests.js';
import { type Directory, IdentityUnavailableError } from './directory.js';
import type { SlaSettings } from './sla.js';

/** Everything the use cases need; built once by buildApp (or a test / the monitor). */
export interface Core {
  requests: RequestModel;
  directory: Directory;
  files: AttachmentFiles;
  names: NatsNames;
  relay: Pick<OutboxRelay, 'kick'>;
  sla: SlaSettings;
  now: () => Date;
  logger: Logger;
  publicBaseUrl: string;
  attachmentMaxBytes: number;
}

export function eventContext(principal: Principal): EventContext {
  return contextFromPrincipal(principal, principal.credential?.type === 'oauth' ? 'oauth' : 'api');
}

/** Optimistic writes retry this many times on a concurrent change before answering 409. */
export const WRITE_ATTEMPTS = 5;

const unavailable = (err: unknown) =>
  new AppError('SERVICE_UNAVAILABLE', `Cannot verify the reference right now: ${(err as Error).message}`);

/** `assignedTo` must be an active agent or admin; anything else is a 400 naming the field. */
export async function requireAssignee(core: Core, userId: string, field: string): Promise<void> {
  let user: Awaited<ReturnType<Directory['user']>>;
  try {
    user = await core.directory.user(userId);
  } catch (err) {
    if (err instanceof IdentityUnavailableError) throw unavailable(err);
    throw err;
  }
  if (!user) throw validationError(field, `user ${userId} does not exist`);
  if (user.status !== 'active') throw validationError(field, `user ${userId} is not active`);
  if (user.role !== 'agent' && user.role !== 'admin') {
    throw validationError(field, `user ${userId} is not an agent or admin`);
  }
}

/** `assignedGroup` must be an existing (not deleted) group. */
export async function requireGroup(core: Core, groupId: string, field: string): Promise<void> {
  let group: Awaited<ReturnType<Directory['group']>>;
  try {
    group = await core.directory.group(groupId);
  } catch (err) {
    if (err instanceof IdentityUnavailableError) throw unavailable(err);
    throw err;
  }
  if (!group || group.deleted) throw validationError(field, `group ${groupId} does not exist`);
}

export const uniqueTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim()))];
