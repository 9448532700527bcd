import type { EventType, SlaStatus } from '@support-desk/contracts';
import {
  buildEvent,
  eventEntry,
  MINUTE_MS,
  minuteKey,
  minuteStart,
  TimeBucketCursor,
  periodicTask,
  systemContext,
} from '@support-desk/platform/core';
import type { SlaCandidate, SlaDueCheck } from '../store/requests-repository.js';
import { alertId } from '../store/sla-alerts.js';
import type { Deps } from './deps.js';
import { isDue, SLA_CHECKS, slaDueMinute } from './sla.js';
import { slaEvents } from '../metrics.js';

interface Check extends SlaDueCheck {
  event: EventType;
  /** The stored status the marker implies. */
  status: SlaStatus;
}

// In SLA_CHECKS' order: breaches first.
const CHECKS: Check[] = SLA_CHECKS.map((check) => ({
  ...check,
  event: check.kind === 'breach' ? 'system.sla_breach' : 'system.sla_warning',
  status: check.kind === 'breach' ? 'breached' : 'at_risk',
}));

/**
 * Minutes read again on every pass: the current one (a moment later in it is not due yet) and the
 * one before, which takes in a write that landed after the minute ended (a slow write, a replica
 * whose clock runs a little behind).
 */
const MINUTES_REREAD = 2;

export interface SlaMonitorOptions {
  /** Time between passes once started (default 15 s). */
  intervalMs?: number;
  /** Requests handled per check (full pass) or per minute (by minute) per round. */
  batchSize?: number;
  /** Rounds per pass at most while work remains. */
  maxPasses?: number;
  /** Minutes a pass catches up one by one; further behind, it scans in full (default 10). */
  catchUpMinutes?: number;
  /** A full scan at least this often, on the service's clock (default 10 min). */
  fullScanEveryMs?: number;
}

/**
 * Emits `system.sla_warning` / `system.sla_breach` exactly once per request and target, whatever
 * the number of replicas. Each emission is claimed by inserting an alert document keyed by
 * (request, clock, kind, target) that carries the event in its outbox, so only the replica whose
 * insert succeeds emits. (A conditional update on the marker would do on MongoDB, but FerretDB v1
 * does not make conditional single-document updates atomic; unique inserts are atomic on both.)
 * The database is the source of truth, not timers.
 *
 * Due requests are found by the minute their next check falls due (`slaDueMinute`, kept by every
 * write that changes the SLA state): each pass reads the minutes since the last one by equality,
 * which FerretDB on PostgreSQL pushes down, where the due moments themselves (ranges on dotted
 * fields) would make it decode every request four times a pass. A full scan by the moments runs
 * at start, after a long pause and every `fullScanEveryMs`: it takes in requests written before
 * the field existed and any write that missed its minute.
 */
export function createSlaMonitor(deps: Deps, opts: SlaMonitorOptions = {}) {
  const batchSize = opts.batchSize ?? 200;
  const maxPasses = opts.maxPasses ?? 20;
  const cursor = new TimeBucketCursor(
    MINUTE_MS,
    opts.catchUpMinutes ?? 10,
    opts.fullScanEveryMs ?? 10 * MINUTE_MS,
  );
  const log = deps.logger.child({ component: 'sla-monitor' });

  /** Claims and marks one due check of one request; true when this replica emitted the event. */
  const emit = async (check: Check, doc: SlaCandidate, now: Date): Promise<boolean> => {
    const statusField = `${check.clock}Status` as 'responseStatus' | 'resolutionStatus';
    const target = check.clock === 'response' ? doc.sla.responseTarget : doc.sla.resolutionTarget;
    const event = buildEvent(
      check.event,
      doc._id,
      systemContext(),
      {
        [`sla.${statusField}`]: { from: doc.sla[statusField] ?? null, to: check.status },
        [`sla.${check.clock}Target`]: { from: null, to: target.toISOString() },
      },
      now,
    );
    // The claim: inserting the alert with its event is atomic on a unique id (see sla-alerts.ts).
    const claimed = await deps.slaAlerts.claim(
      {
        _id: alertId(doc._id, check.clock, check.kind, target),
        requestId: doc._id,
        clock: check.clock,
        kind: check.kind,
        target,
        emittedAt: now,
      },
      [eventEntry(deps.names, event)],
    );
    if (claimed) {
      slaEvents.inc({ kind: check.kind, clock: check.clock });
    }
    // The marker takes the request out of the scans, keeps its stored status current, and moves
    // its due minute to its next check.
    await deps.requests.markSla(doc._id, check.marker, { [statusField]: check.status }, now, (marked) =>
      slaDueMinute(marked, now),
    );
    return claimed;
  };

  /** A full round: each check's due requests by their moments; `full` when a batch was full. */
  const scanRound = async (now: Date) => {
    let emitted = 0;
    let full = false;
    for (const check of CHECKS) {
      const due = await deps.requests.dueForSla(check, now, batchSize);
      for (const doc of due) if (await emit(check, doc, now)) emitted++;
      if (due.length === batchSize) full = true;
    }
    return { emitted, full };
  };

  /** A round over the minutes planned: every due check of the requests due in them. */
  const minutesRound = async (minutes: number[], now: Date) => {
    let emitted = 0;
    let full = false;
    for (const minute of minutes) {
      const docs = await deps.requests.dueInMinute(minuteKey(minute), batchSize);
      for (const doc of docs) {
        if (doc.deletedAt) continue;
        // A breach marked first leaves its clock's warning out of its window (see isDue).
        let state = doc;
        for (const check of CHECKS) {
          if (!isDue(check, state, now)) continue;
          if (await emit(check, state, now)) emitted++;
          state = { ...state, sla: { ...state.sla, [check.marker]: now } };
        }
      }
      if (docs.length === batchSize) full = true;
    }
    return { emitted, full };
  };

  /** One monitoring pass as of `deps.clock()`; returns how many events this replica emitted. */
  const tick = async (): Promise<number> => {
    let total = 0;
    for (let round = 0; round < maxPasses; round++) {
      const now = deps.clock();
      const current = minuteStart(now.getTime());
      const settled = current - (MINUTES_REREAD - 1) * MINUTE_MS;
      const plan = cursor.plan(now.getTime(), current);
      const { emitted, full } = plan.full ? await scanRound(now) : await minutesRound(plan.buckets, now);
      total += emitted;
      if (full) continue;
      if (plan.full) cursor.fullDone(now.getTime(), settled - MINUTE_MS);
      else for (const minute of plan.buckets) if (minute < settled) cursor.bucketDone(minute);
      break;
    }
    if (total > 0) log.info({ emitted: total }, 'sla events emitted');
    return total;
  };

  return periodicTask({
    name: 'sla monitor pass',
    intervalMs: opts.intervalMs ?? 15_000,
    logger: log,
    run: tick,
    onError: 0,
  });
}
