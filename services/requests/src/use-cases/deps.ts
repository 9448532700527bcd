import type { NatsNames } from '@support-desk/contracts';
import { AppError, type Logger, validationError } from '@support-desk/platform/core';
import type { AttachmentFiles } from '../store/files.js';
import type { BulkJobsRepository } from '../store/bulk-jobs.js';
import type { RequestTrash } from '../store/request-trash.js';
import type { RequestsRepository } from '../store/requests-repository.js';
import type { SlaAlertsRepository } from '../store/sla-alerts.js';
import type { SlaPoliciesRepository } from '../store/sla-policies.js';
import { type Directory, IdentityUnavailableError } from './directory.js';
import type { SlaSettings } from './sla.js';

/** Everything the use cases need; built once by the composition root (or a test). */
export interface Deps {
  requests: RequestsRepository;
  slaAlerts: SlaAlertsRepository;
  slaPolicies: SlaPoliciesRepository;
  directory: Directory;
  files: AttachmentFiles;
  names: NatsNames;
  sla: SlaSettings;
  clock: () => Date;
  logger: Logger;
  publicBaseUrl: string;
  attachmentMaxBytes: number;
  lists: ListSettings;
  /** The trash: deleted requests, restorable for `trashRetentionMs`, then purged. */
  trash: RequestTrash;
  trashRetentionMs: number;
  /** Bulk jobs: their store, and the nudge that wakes this process's worker. */
  bulk: BulkJobs;
}

/** What the use cases need of bulk jobs: the store, and a nudge for this process's worker. */
interface BulkJobs {
  store: BulkJobsRepository;
  wake: () => void;
  /** How long a completed job and its results are kept. */
  retentionMs: number;
}

/** Bounds of the lists' work (README: cost model of `q`, the changes feed's settle delay). */
interface ListSettings {
  searchMaxTimeMs: number;
  changesSettleMs: number;
}

/**
 * Identity did not answer: the caller learns that the reference cannot be checked now, never
 * why (the NATS or RPC error is for the log, not for the client).
 */
function unavailable(deps: Deps, err: unknown, reference: string): AppError {
  deps.logger.warn({ err, reference }, 'identity did not answer a reference check');
  return new AppError('SERVICE_UNAVAILABLE', 'Cannot verify the reference right now; retry later');
}

/** `assignedTo` must be an active agent or admin; anything else is a 400 naming the field. */
export async function requireAssignee(deps: Deps, userId: string, field: string): Promise<void> {
  let user: Awaited<ReturnType<Directory['user']>>;
  try {
    user = await deps.directory.user(userId);
  } catch (err) {
    if (err instanceof IdentityUnavailableError) throw unavailable(deps, err, userId);
    throw err;
  }
  if (!user) throw validationError(field, `user ${userId} does not exist`);
  if (user.status !== 'active') throw validationError(field, `user ${userId} is not active`);
  if (user.role !== 'agent' && user.role !== 'admin') {
    throw validationError(field, `user ${userId} is not an agent or admin`);
  }
}

/** `assignedGroup` must be an existing (not deleted) group. */
export async function requireGroup(deps: Deps, groupId: string, field: string): Promise<void> {
  let group: Awaited<ReturnType<Directory['group']>>;
  try {
    group = await deps.directory.group(groupId);
  } catch (err) {
    if (err instanceof IdentityUnavailableError) throw unavailable(deps, err, groupId);
    throw err;
  }
  if (!group || group.deleted) throw validationError(field, `group ${groupId} does not exist`);
}

export const uniqueTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim()))];
