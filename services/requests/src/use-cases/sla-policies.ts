import {
  type Changes,
  type CreateSlaPolicyBody,
  newId,
  PRIORITIES,
  type RequestStatus,
  SLA_POLICY_LIMITS,
  type SlaPolicy,
  type SlaPolicyList,
  type SlaTargets,
  type UpdateSlaPolicyBody,
} from '@support-desk/contracts';
import {
  buildEvent,
  conflict,
  type EventContext,
  eventEntry,
  isDuplicateKeyError,
  notFound,
} from '@support-desk/platform/core';
import type { SlaPolicyRecord } from '../store/sla-policies.js';
import { AROUND_THE_CLOCK_UTC } from './business-time.js';
import type { Deps } from './deps.js';
import type { SlaSettings } from './sla.js';

/** Waiting on the customer: what a policy pauses in when it does not say. */
const DEFAULT_PAUSE_STATUSES: RequestStatus[] = ['pending'];
const NAME_TAKEN = (name: string) => conflict(`An SLA policy named ${name} already exists`);

function toSlaPolicyView(doc: SlaPolicyRecord): SlaPolicy {
  return {
    id: doc._id,
    name: doc.name,
    description: doc.description,
    position: doc.position,
    match: doc.match,
    targets: doc.targets,
    calendar: doc.calendar,
    pauseStatuses: doc.pauseStatuses,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}

/** The SLA_POLICY table as the list shows it (the fallback when no policy matches). */
function fallbackView(settings: SlaSettings): SlaPolicyList['fallback'] {
  const row = (tier: 'standard' | 'vip') =>
    Object.fromEntries(
      PRIORITIES.map((p) => [
        p,
        {
          firstResponseMinutes: settings.policy[tier][p].responseMinutes,
          resolutionMinutes: settings.policy[tier][p].resolutionMinutes,
        },
      ]),
    ) as SlaTargets;
  return { standard: row('standard'), vip: row('vip') };
}

export async function listSlaPolicies(deps: Deps): Promise<SlaPolicyList> {
  const live = await deps.slaPolicies.live();
  return { policies: live.map(toSlaPolicyView), fallback: fallbackView(deps.sla) };
}

export async function getSlaPolicy(deps: Deps, id: string): Promise<SlaPolicy> {
  const doc = await deps.slaPolicies.find(id);
  if (!doc) throw notFound('SLA policy');
  return toSlaPolicyView(doc);
}

/** What a client sets of a policy: what a change names and an event shows. */
const POLICY_FIELDS = [
  'name',
  'description',
  'position',
  'match',
  'targets',
  'calendar',
  'pauseStatuses',
] as const;

/** The fields an event shows of a policy, prefixed like the other config events' (`slaPolicy.name`). */
function policyChanges(before: Partial<SlaPolicyRecord>, after: Partial<SlaPolicyRecord>): Changes {
  const changes: Changes = {};
  for (const field of POLICY_FIELDS) {
    if (!(field in after)) continue;
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[`slaPolicy.${field}`] = { from, to };
  }
  return changes;
}

export async function createSlaPolicy(
  deps: Deps,
  ctx: EventContext,
  body: CreateSlaPolicyBody,
): Promise<SlaPolicy> {
  const calendar = body.calendar ?? AROUND_THE_CLOCK_UTC;
  const live = await deps.slaPolicies.live();
  if (live.length >= SLA_POLICY_LIMITS.policies) {
    throw conflict(`At most ${SLA_POLICY_LIMITS.policies} SLA policies; delete one first`);
  }
  const now = deps.clock();
  const doc: SlaPolicyRecord = {
    _id: newId('slaPolicy', now.getTime()),
    name: body.name,
    liveName: body.name,
    description: body.description ?? '',
    // Tried last unless placed.
    position:
      body.position ?? Math.min(SLA_POLICY_LIMITS.position, Math.max(-1, ...live.map((p) => p.position)) + 1),
    match: body.match ?? {},
    targets: body.targets,
    calendar,
    pauseStatuses: body.pauseStatuses ?? DEFAULT_PAUSE_STATUSES,
    deletedAt: null,
    createdAt: now,
    updatedAt: now,
    rev: 0,
  };
  const event = buildEvent('system.config_changed', doc._id, ctx, policyChanges({}, doc), now);
  if (!(await deps.slaPolicies.insert(doc, [eventEntry(deps.names, event)]))) throw NAME_TAKEN(body.name);
  return toSlaPolicyView(doc);
}

export async function updateSlaPolicy(
  deps: Deps,
  ctx: EventContext,
  id: string,
  body: UpdateSlaPolicyBody,
): Promise<SlaPolicy> {
  const after: Partial<SlaPolicyRecord> = {};
  for (const field of POLICY_FIELDS) {
    if (body[field] !== undefined) (after as Record<string, unknown>)[field] = body[field];
  }
  if (after.name !== undefined) after.liveName = after.name;
  try {
    return await deps.slaPolicies.update(id, (current) => {
      const changes = policyChanges(current, after);
      if (Object.keys(changes).length === 0) return { write: null, result: toSlaPolicyView(current) };
      const now = deps.clock();
      const set = { ...after, updatedAt: now };
      const event = buildEvent('system.config_changed', id, ctx, changes, now);
      return {
        write: { set, outbox: [eventEntry(deps.names, event)] },
        result: toSlaPolicyView({ ...current, ...set }),
      };
    });
  } catch (err) {
    if (after.name !== undefined && isDuplicateKeyError(err)) throw NAME_TAKEN(after.name);
    throw err;
  }
}

export async function deleteSlaPolicy(deps: Deps, ctx: EventContext, id: string) {
  await deps.slaPolicies.update(id, (current) => {
    const now = deps.clock();
    const event = buildEvent(
      'system.config_changed',
      id,
      ctx,
      { 'slaPolicy.deleted': { from: false, to: true }, 'slaPolicy.name': { from: current.name, to: null } },
      now,
    );
    return {
      // The name is free again once the policy is gone.
      write: {
        set: { deletedAt: now, liveName: id, updatedAt: now },
        outbox: [eventEntry(deps.names, event)],
      },
      result: null,
    };
  });
  return { id, deleted: true as const };
}
