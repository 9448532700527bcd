import {
  type Priority,
  type RequestDetail,
  type RequestStatus,
  type SlaStatus,
} from '@support-desk/contracts';
import { minuteKey } from '@support-desk/platform/core';
import type { SlaDueCheck } from '../store/requests-repository.js';
import type { SlaState } from '../store/sla-state.js';
import { AROUND_THE_CLOCK_UTC, addBusinessTime, businessTimeBetween } from './business-time.js';
import type { SlaSettings } from './sla-fallback.js';
import type { PickedPolicy } from './sla-picking.js';
import { isStopped } from './workflow.js';

export { DEFAULT_SLA_POLICY, parseSlaPolicy, type SlaSettings } from './sla-fallback.js';
export { pickPolicy, type PickedPolicy } from './sla-picking.js';

export type { SlaState };

/** The clocks of one request, as far as the SLA cares. */
export interface SlaClock {
  status: RequestStatus;
  /** First public reply by an agent/admin other than the requester (or the resolution). */
  firstResponseAt: Date | null;
  /** When the resolution clock stopped (move to resolved or closed); null while it runs. */
  clockStoppedAt: Date | null;
}

type ClockName = 'response' | 'resolution';
const CLOCKS: readonly ClockName[] = ['response', 'resolution'];

const isPaused = (sla: Pick<SlaState, 'pauseStatuses'>, status: RequestStatus) =>
  sla.pauseStatuses.includes(status);

/** Whether the clock has stopped for good (its target met or missed). */
const stopped = (clock: ClockName, c: SlaClock) =>
  clock === 'response' ? !!c.firstResponseAt : !!c.clockStoppedAt || isStopped(c.status);

/** Whether the clock runs: not stopped, and the request not in a pause status. */
const runs = (clock: ClockName, sla: Pick<SlaState, 'pauseStatuses'>, c: SlaClock) =>
  !stopped(clock, c) && !isPaused(sla, c.status);

/**
 * The SLA state of a stored request, those stored before SLA policies included: they ran on the
 * SLA_POLICY table around the clock from `createdAt`, so their goals and the time used are what
 * their targets and clocks say (exact as of `now`).
 */
function currentSla(d: SlaClock & { sla: SlaState; createdAt: Date }, now: Date): SlaState {
  if (d.sla.countedAt) return d.sla;
  const created = d.createdAt.getTime();
  const pausedMs = d.sla.pausedMs ?? 0;
  return {
    ...d.sla,
    policyId: null,
    calendar: AROUND_THE_CLOCK_UTC,
    pauseStatuses: [],
    responseGoalMs: d.sla.responseTarget.getTime() - created,
    resolutionGoalMs: d.sla.resolutionTarget.getTime() - created - pausedMs,
    responseUsedMs: (d.firstResponseAt ?? now).getTime() - created,
    resolutionUsedMs: (d.clockStoppedAt ?? now).getTime() - created - pausedMs,
    countedAt: now,
    pausedSince: null,
  };
}

const goalOf = (clock: ClockName, s: SlaState) =>
  clock === 'response' ? s.responseGoalMs : s.resolutionGoalMs;
const usedOf = (clock: ClockName, s: SlaState) =>
  clock === 'response' ? s.responseUsedMs : s.resolutionUsedMs;
const warnGoal = (goal: number, ratio: number) => Math.round(goal * ratio);

/** Business time a clock has run as of `now` (`running`: whether it ran since `countedAt`). */
function usedAt(clock: ClockName, s: SlaState, running: boolean, now: Date): number {
  const since = running ? businessTimeBetween(s.calendar, s.countedAt.getTime(), now.getTime()) : 0;
  return usedOf(clock, s) + since;
}

function statusOf(clock: ClockName, s: SlaState, c: SlaClock, ratio: number, now: Date): SlaStatus {
  const goal = goalOf(clock, s);
  if (stopped(clock, c)) return usedOf(clock, s) <= goal ? 'met' : 'breached';
  const target = clock === 'response' ? s.responseTarget : s.resolutionTarget;
  const warnAt = clock === 'response' ? s.responseWarnAt : s.resolutionWarnAt;
  if (runs(clock, s, c)) {
    if (now.getTime() >= target.getTime()) return 'breached';
    return now.getTime() >= warnAt.getTime() ? 'at_risk' : 'on_track';
  }
  const used = usedOf(clock, s);
  if (used >= goal) return 'breached';
  return used >= warnGoal(goal, ratio) ? 'at_risk' : 'on_track';
}

/** `after` (ms from now) as an instant; one already reached stays where it was (never later than now). */
const momentAfter = (s: SlaState, nowMs: number, amounts: number[]) =>
  addBusinessTime(
    s.calendar,
    nowMs,
    amounts.map((a) => Math.max(a, 0)),
  );

/**
 * The SLA state after a write at `now`: the clocks that ran since the last one are counted on the
 * calendar they ran on, then `policy` (a new pick) applies, and the targets of the running clocks
 * are where their remaining business time runs out (a paused or stopped clock keeps its targets).
 * Markers are kept only while their moment is still past (a later target re-arms its warning and
 * breach once).
 */
export function computeSla(
  settings: SlaSettings,
  change: {
    /** The request before the write (none on a create). */
    before?: SlaClock & { sla: SlaState; createdAt: Date };
    after: SlaClock;
    /** The policy picked now: on a create, and when the facts it is picked on changed. */
    policy?: PickedPolicy;
    priority: Priority;
    vip: boolean;
  },
  now: Date,
): SlaState {
  const nowMs = now.getTime();
  const previous = change.before ? currentSla(change.before, now) : undefined;
  const counted = { ...(previous ?? ({} as SlaState)) };
  if (previous && change.before) {
    for (const clock of CLOCKS) {
      const used = usedAt(clock, previous, runs(clock, previous, change.before), now);
      if (clock === 'response') counted.responseUsedMs = used;
      else counted.resolutionUsedMs = used;
    }
  } else {
    counted.responseUsedMs = 0;
    counted.resolutionUsedMs = 0;
  }
  const policy = change.policy;
  if (policy) {
    counted.policyId = policy.id;
    counted.calendar = policy.calendar;
    counted.pauseStatuses = policy.pauseStatuses;
    counted.responseGoalMs = policy.responseGoalMs;
    counted.resolutionGoalMs = policy.resolutionGoalMs;
  }
  if (!counted.calendar) throw new Error('computeSla: a new SLA state needs a policy');
  const priority = change.priority;
  counted.tier = policy ? `${policy.name}:${priority}` : previous!.tier.replace(/:[^:]*$/, `:${priority}`);
  counted.vip = change.vip;
  counted.countedAt = now;
  counted.pausedSince = isPaused(counted, change.after.status) ? (previous?.pausedSince ?? now) : null;

  const s = counted as SlaState;
  for (const clock of CLOCKS) {
    const goal = goalOf(clock, s);
    const used = usedOf(clock, s);
    const keepOld = previous && !runs(clock, s, change.after);
    if (keepOld) continue;
    const [warnAt, target] = momentAfter(s, nowMs, [
      warnGoal(goal, settings.warningRatio) - used,
      goal - used,
    ]);
    const prevWarn = previous?.[`${clock}WarnAt`];
    const prevTarget = previous?.[`${clock}Target`];
    // A moment already reached keeps its instant (the breach happened then, not now).
    const reached = (amount: number, moment: number, prior: Date | undefined) =>
      amount <= 0 && prior && prior.getTime() <= nowMs ? prior : new Date(moment);
    s[`${clock}WarnAt`] = reached(warnGoal(goal, settings.warningRatio) - used, warnAt!, prevWarn);
    s[`${clock}Target`] = reached(goal - used, target!, prevTarget);
  }
  const keep = (marker: Date | null | undefined, moment: Date) =>
    marker && nowMs >= moment.getTime() ? marker : null;
  s.responseStatus = statusOf('response', s, change.after, settings.warningRatio, now);
  s.resolutionStatus = statusOf('resolution', s, change.after, settings.warningRatio, now);
  s.responseWarnedAt = keep(previous?.responseWarnedAt, s.responseWarnAt);
  s.responseBreachedAt = keep(previous?.responseBreachedAt, s.responseTarget);
  s.resolutionWarnedAt = keep(previous?.resolutionWarnedAt, s.resolutionWarnAt);
  s.resolutionBreachedAt = keep(previous?.resolutionBreachedAt, s.resolutionTarget);
  delete s.pausedMs;
  return s;
}

/** One clock as a read shows it: its state, when it breaches and the business time left. */
function clockView(clock: ClockName, s: SlaState, c: SlaClock, now: Date) {
  if (stopped(clock, c)) return { state: 'stopped' as const, breachAt: null, remainingSeconds: null };
  const goal = goalOf(clock, s);
  if (!runs(clock, s, c)) {
    return {
      state: 'paused' as const,
      breachAt: null,
      remainingSeconds: Math.trunc((goal - usedOf(clock, s)) / 1000),
    };
  }
  const target = (clock === 'response' ? s.responseTarget : s.resolutionTarget).getTime();
  const nowMs = now.getTime();
  const remaining =
    nowMs < target
      ? businessTimeBetween(s.calendar, nowMs, target)
      : -businessTimeBetween(s.calendar, target, nowMs);
  return {
    state: 'running' as const,
    breachAt: new Date(target).toISOString(),
    remainingSeconds: Math.trunc(remaining / 1000),
  };
}

/** The request's SLA block as a read (and an event's snapshot) shows it, as of `now`. */
export function slaView(
  settings: SlaSettings,
  d: SlaClock & { sla: SlaState; createdAt: Date },
  now: Date,
): RequestDetail['sla'] {
  const s = currentSla(d, now);
  return {
    tier: s.tier,
    responseTarget: s.responseTarget.toISOString(),
    resolutionTarget: s.resolutionTarget.toISOString(),
    // Computed as of now so a read is exact between two monitor passes.
    responseStatus: statusOf('response', s, d, settings.warningRatio, now),
    resolutionStatus: statusOf('resolution', s, d, settings.warningRatio, now),
    policy: s.policyId ? { id: s.policyId, name: s.tier.replace(/:[^:]*$/, '') } : null,
    response: clockView('response', s, d, now),
    resolution: clockView('resolution', s, d, now),
  };
}

/**
 * The SLA block as a read's ETag covers it (`withRevision`'s basis): a running clock's
 * `remainingSeconds` counts down every second and follows from its `breachAt`, so it is left out,
 * or a client holding a read would never get 304 while a clock runs. Everything else stays: the
 * statuses (`at_risk`, `breached`: a change with time the tag does show), a paused clock's frozen
 * remainder, `breachAt`.
 */
export function slaTagBasis(sla: RequestDetail['sla']) {
  const clock = (c: RequestDetail['sla']['response']) =>
    c.state === 'running' ? { state: c.state, breachAt: c.breachAt } : c;
  return { ...sla, response: clock(sla.response), resolution: clock(sla.resolution) };
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

// A paused clock is due for nothing: its moments move when it resumes.
const clockRunning = (clock: SlaDueCheck['clock'], s: SlaCheckedState) =>
  !s.sla.pausedSince &&
  (clock === 'response' ? !s.firstResponseAt : !s.clockStoppedAt && !isStopped(s.status));

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
