import { PRIORITIES, type Priority, type RequestStatus, type SlaStatus } from '@support-desk/contracts';
import { ConfigError, minuteKey } from '@support-desk/platform/core';
import type { SlaDueCheck } from '../store/requests-repository.js';
import type { SlaState } from '../store/sla-state.js';
import { isStopped } from './workflow.js';

export type { SlaState };

export interface SlaRow {
  /** Minutes from creation to the first response. */
  responseMinutes: number;
  /** Minutes from creation to resolution (time spent resolved/closed is not counted). */
  resolutionMinutes: number;
}
export type SlaTier = 'standard' | 'vip';
export type SlaPolicy = Record<SlaTier, Record<Priority, SlaRow>>;

const h = (hours: number) => hours * 60;

export const DEFAULT_SLA_POLICY: SlaPolicy = {
  standard: {
    critical: { responseMinutes: h(1), resolutionMinutes: h(4) },
    high: { responseMinutes: h(4), resolutionMinutes: h(24) },
    medium: { responseMinutes: h(8), resolutionMinutes: h(72) },
    low: { responseMinutes: h(24), resolutionMinutes: h(120) },
  },
  vip: {
    critical: { responseMinutes: 30, resolutionMinutes: h(2) },
    high: { responseMinutes: h(2), resolutionMinutes: h(12) },
    medium: { responseMinutes: h(4), resolutionMinutes: h(36) },
    low: { responseMinutes: h(12), resolutionMinutes: h(60) },
  },
};

/** The default table with the rows of `json` (SLA_POLICY) laid over it; fails naming the bad cell. */
export function parseSlaPolicy(json: string | undefined): SlaPolicy {
  const policy: SlaPolicy = structuredClone(DEFAULT_SLA_POLICY);
  if (!json) return policy;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new ConfigError('Invalid configuration: SLA_POLICY is not valid JSON');
  }
  if (!raw || typeof raw !== 'object')
    throw new ConfigError('Invalid configuration: SLA_POLICY must be an object');
  for (const [tier, rows] of Object.entries(raw as Record<string, unknown>)) {
    if (tier !== 'standard' && tier !== 'vip') {
      throw new ConfigError(`Invalid configuration: SLA_POLICY.${tier} is not a tier (standard, vip)`);
    }
    for (const [priority, row] of Object.entries((rows ?? {}) as Record<string, unknown>)) {
      if (!(PRIORITIES as readonly string[]).includes(priority)) {
        throw new ConfigError(`Invalid configuration: SLA_POLICY.${tier}.${priority} is not a priority`);
      }
      const r = row as Partial<SlaRow>;
      for (const key of ['responseMinutes', 'resolutionMinutes'] as const) {
        const v = r?.[key] ?? policy[tier][priority as Priority][key];
        if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
          throw new ConfigError(`Invalid configuration: SLA_POLICY.${tier}.${priority}.${key} must be > 0`);
        }
        policy[tier][priority as Priority][key] = v;
      }
    }
  }
  return policy;
}

/** The clocks of one request, as far as the SLA cares. */
export interface SlaClock {
  priority: Priority;
  createdAt: Date;
  /** First public reply by an agent/admin other than the requester (or the resolution). */
  firstResponseAt: Date | null;
  /** When the resolution clock stopped (move to resolved or closed); null while it runs. */
  clockStoppedAt: Date | null;
}

export interface SlaSettings {
  policy: SlaPolicy;
  warningRatio: number;
}

export function statusAt(target: Date, warnAt: Date, doneAt: Date | null, now: Date): SlaStatus {
  if (doneAt) return doneAt.getTime() <= target.getTime() ? 'met' : 'breached';
  if (now.getTime() >= target.getTime()) return 'breached';
  if (now.getTime() >= warnAt.getTime()) return 'at_risk';
  return 'on_track';
}

/**
 * Targets from createdAt for the tier and priority, statuses as of `now`, and the markers kept
 * only while their moment is still past (a later target re-arms its warning and breach once).
 */
export function computeSla(
  settings: SlaSettings,
  clock: SlaClock,
  vip: boolean,
  now: Date,
  previous?: Pick<
    SlaState,
    'responseWarnedAt' | 'responseBreachedAt' | 'resolutionWarnedAt' | 'resolutionBreachedAt' | 'pausedMs'
  >,
): SlaState {
  const tier: SlaTier = vip ? 'vip' : 'standard';
  const row = settings.policy[tier][clock.priority];
  const created = clock.createdAt.getTime();
  const pausedMs = previous?.pausedMs ?? 0;
  const responseMs = row.responseMinutes * 60_000;
  const resolutionMs = row.resolutionMinutes * 60_000;
  const responseTarget = new Date(created + responseMs);
  const responseWarnAt = new Date(created + Math.round(responseMs * settings.warningRatio));
  const resolutionTarget = new Date(created + resolutionMs + pausedMs);
  const resolutionWarnAt = new Date(created + Math.round(resolutionMs * settings.warningRatio) + pausedMs);
  const keep = (marker: Date | null | undefined, moment: Date) =>
    marker && now.getTime() >= moment.getTime() ? marker : null;
  return {
    tier: `${tier}:${clock.priority}`,
    vip,
    responseTarget,
    responseWarnAt,
    resolutionTarget,
    resolutionWarnAt,
    responseStatus: statusAt(responseTarget, responseWarnAt, clock.firstResponseAt, now),
    resolutionStatus: statusAt(resolutionTarget, resolutionWarnAt, clock.clockStoppedAt, now),
    responseWarnedAt: keep(previous?.responseWarnedAt, responseWarnAt),
    responseBreachedAt: keep(previous?.responseBreachedAt, responseTarget),
    resolutionWarnedAt: keep(previous?.resolutionWarnedAt, resolutionWarnAt),
    resolutionBreachedAt: keep(previous?.resolutionBreachedAt, resolutionTarget),
    pausedMs,
  };
}

/** What decides whether an SLA check is due: the request's clocks and SLA state. */
export interface SlaCheckedState {
  status: RequestStatus;
  firstResponseAt: Date | null;
  clockStoppedAt: Date | null;
  sla: SlaState;
}

/** The four checks, breaches first: a request first seen past its target gets the breach only. */
export const SLA_CHECKS: readonly SlaDueCheck[] = [
  { clock: 'response', kind: 'breach', marker: 'responseBreachedAt' },
  { clock: 'resolution', kind: 'breach', marker: 'resolutionBreachedAt' },
  { clock: 'response', kind: 'warning', marker: 'responseWarnedAt' },
  { clock: 'resolution', kind: 'warning', marker: 'resolutionWarnedAt' },
];

const clockRunning = (clock: SlaDueCheck['clock'], s: SlaCheckedState) =>
  clock === 'response' ? !s.firstResponseAt : !s.clockStoppedAt && !isStopped(s.status);

const targetOf = (clock: SlaDueCheck['clock'], sla: SlaState) =>
  clock === 'response' ? sla.responseTarget : sla.resolutionTarget;

/** When `check` comes due for `s`, or null if it never will (clock stopped, already emitted). */
function momentOf(check: SlaDueCheck, s: SlaCheckedState, now: Date): Date | null {
  if (!clockRunning(check.clock, s) || s.sla[check.marker]) return null;
  const target = targetOf(check.clock, s.sla);
  if (check.kind === 'breach') return target;
  // A warning is due only inside its window, between the threshold and the target.
  if (target.getTime() <= now.getTime()) return null;
  return check.clock === 'response' ? s.sla.responseWarnAt : s.sla.resolutionWarnAt;
}

/** Whether `check` is due for `s` as of `now` (the same rule as the monitor's full scan). */
export function isDue(check: SlaDueCheck, s: SlaCheckedState, now: Date): boolean {
  const moment = momentOf(check, s, now);
  return moment !== null && moment.getTime() <= now.getTime();
}

/**
 * The minute in which the request's next SLA check falls due (never before the minute of `now`),
 * or null when none is pending: stored with every write that changes the SLA state, so that the
 * monitor finds due requests by equality on one field (see sla-monitor.ts).
 */
export function slaDueMinute(s: SlaCheckedState, now: Date): string | null {
  let next: number | null = null;
  for (const check of SLA_CHECKS) {
    const moment = momentOf(check, s, now);
    if (moment && (next === null || moment.getTime() < next)) next = moment.getTime();
  }
  return next === null ? null : minuteKey(Math.max(next, now.getTime()));
}
