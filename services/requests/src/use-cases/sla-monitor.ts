import type { EventType, SlaStatus } from '@support-desk/contracts';
import { buildEvent, eventEntry, periodicTask, systemContext } from '@support-desk/platform';
import type { SlaDueCheck } from '../store/requests-repository.js';
import { alertId } from '../store/sla-alerts.js';
import type { Deps } from './deps.js';
import { slaEvents } from '../metrics.js';

interface Check extends SlaDueCheck {
  event: EventType;
  /** The stored status the marker implies. */
  status: SlaStatus;
}

// Breaches first: a request first seen past its target gets the breach only, never a late warning.
const CHECKS: Check[] = [
  {
    clock: 'response',
    kind: 'breach',
    event: 'system.sla_breach',
    marker: 'responseBreachedAt',
    status: 'breached',
  },
  {
    clock: 'resolution',
    kind: 'breach',
    event: 'system.sla_breach',
    marker: 'resolutionBreachedAt',
    status: 'breached',
  },
  {
    clock: 'response',
    kind: 'warning',
    event: 'system.sla_warning',
    marker: 'responseWarnedAt',
    status: 'at_risk',
  },
  {
    clock: 'resolution',
    kind: 'warning',
    event: 'system.sla_warning',
    marker: 'resolutionWarnedAt',
    status: 'at_risk',
  },
];

export interface SlaMonitorOptions {
  /** Time between passes once started (default 15 s). */
  intervalMs?: number;
  /** Requests handled per check per pass (bounds one pass; the next pass continues). */
  batchSize?: number;
  /** Passes per tick at most while work remains. */
  maxPasses?: number;
}

/**
 * Emits `system.sla_warning` / `system.sla_breach` exactly once per request and target, whatever
 * the number of replicas. Due requests are found by their stored moments and markers; each
 * emission is claimed by inserting an alert document keyed by (request, clock, kind, target)
 * that carries the event in its outbox, so only the replica whose insert succeeds emits. (A
 * conditional update on the marker would do on MongoDB, but FerretDB v1 does not make
 * conditional single-document updates atomic; unique inserts are atomic on both.) The database
 * is the source of truth, not timers.
 */
export function createSlaMonitor(deps: Deps, opts: SlaMonitorOptions = {}) {
  const batchSize = opts.batchSize ?? 200;
  const maxPasses = opts.maxPasses ?? 20;
  const log = deps.logger.child({ component: 'sla-monitor' });

  const runCheck = async (check: Check, now: Date): Promise<{ emitted: number; full: boolean }> => {
    const due = await deps.requests.dueForSla(check, now, batchSize);
    let emitted = 0;
    for (const doc of due) {
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
        emitted++;
        slaEvents.inc({
          kind: check.event === 'system.sla_breach' ? 'breach' : 'warning',
          clock: check.clock,
        });
      }
      // The marker takes the request out of this scan and keeps its stored status current.
      await deps.requests.markSla(doc._id, check.marker, { [statusField]: check.status }, now);
    }
    return { emitted, full: due.length === batchSize };
  };

  /** One monitoring pass set as of `deps.clock()`; returns how many events this replica emitted. */
  const tick = async (): Promise<number> => {
    let total = 0;
    for (let pass = 0; pass < maxPasses; pass++) {
      const now = deps.clock();
      let more = false;
      for (const check of CHECKS) {
        const { emitted, full } = await runCheck(check, now);
        total += emitted;
        if (full) more = true;
      }
      if (!more) break;
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

export type SlaMonitor = ReturnType<typeof createSlaMonitor>;
