import { MINUTE_MS, minuteKey, minuteStart, TimeBucketCursor } from '@support-desk/platform/core';
import { deliveryAttempts, deliveryLatency } from '../metrics.js';
import type { DeliveryDoc, DueDelivery } from '../store/deliveries.js';
import type { LaneLease } from '../store/lane-leases.js';
import { applyToSubscription, nextState, type RetryPolicy } from './attempt-outcome.js';
import type { Deps } from './deps.js';
import { createLaneRetries } from './lane-retries.js';
import { createSubscriptionCache } from './subscription-cache.js';
import { signingSecrets } from './subscriptions.js';

export interface WorkerOptions extends RetryPolicy {
  /**
   * How soon a lane that could not go on is looked at again: behind the intake, claimed by another
   * replica, or failed on a store error. Not a poll: with nothing to do the worker sleeps.
   */
  pollMs: number;
  /**
   * The safety sweep: a pass at least this often, for what no wake-up announces (a retry due on a
   * lane another replica gave up by dying, a delivery written by another replica's API).
   */
  sweepMs: number;
  /** Lanes this replica works at once. */
  concurrency: number;
  /** How long a lane claim lasts; the worker stops taking new attempts on a lane well before. */
  leaseMs: number;
  /** The longest one attempt may take (connect + response timeouts). */
  attemptMs: number;
  /**
   * How long a subscription read is used for the attempts after it (every lane's), at most: a write
   * to it drops the copy at once (this replica's) or on its change notice (another's).
   */
  subscriptionCacheMs: number;
  /** Deliveries read per bucket or full pass. */
  batchSize?: number;
  fullScanEveryMs?: number;
}

/**
 * How a turn on a lane ended: nothing pending, its head waiting for a retry, held (subscription
 * off, or another replica's claim), out of budget, behind the intake, or failed.
 */
type LaneEnd = 'empty' | 'waiting' | 'held' | 'taken' | 'budget' | 'behind' | 'failed';

/** How a lane's turn ended, and when its head is due when it waits for a retry. */
interface LaneTurn {
  ended: LaneEnd;
  dueAt?: Date | null;
  /** When (`namings`) its last read of the lane's head was asked for. */
  readAt?: number;
}

/** How many times a lane named for an event waits for the intake before its head is read anyway. */
const MAX_DEFERRALS = 10;
/** The most lanes kept ready in memory. */
const READY_LIMIT = 10_000;

/** Event to 2xx: the event's time is where its delivery's `position` starts. */
function observeLatency(doc: DeliveryDoc, acceptedAt: Date) {
  const eventAt = Date.parse(doc.position.split('|')[0]);
  if (!Number.isNaN(eventAt)) deliveryLatency.observe(Math.max(0, (acceptedAt.getTime() - eventAt) / 1000));
}

/**
 * The delivery worker. It does not poll: it works when told there is work (the intake names the
 * lanes of the deliveries it stores; the API wakes it on a replay, a ping, a resume), when a timer
 * it set runs out (the next retry it knows of: a lane's head waiting, a delivery a pass saw due
 * later), and on the safety sweep every `sweepMs`. Due deliveries are found by their due minute (equality reads: the minutes
 * since the last pass, plus the last two minutes every pass; a full read of the pending ones at
 * start and every `fullScanEveryMs`). Each is attempted only through its lane (subscription +
 * resource): the replica that claims the lane (a unique insert, expiring) attempts the lane's
 * oldest pending delivery, then the next while they are due, so events of one resource reach a
 * subscriber in order, and no delivery is attempted by two replicas at once.
 *
 * Lanes known to be due wait in `ready` for a free slot: those a pass found, and those the intake
 * names as it stores new deliveries. A finished lane takes the next ready one; the store is read
 * again only when none is left and something may be due that nothing named (`unseen`): a pass per
 * finished lane cost three reads an attempt. The subscription reads of lanes working at once are
 * shared (one per distinct subscription, in the repository). Their writes are not batched: bulk
 * writes and unordered inserts from two replicas left FerretDB v1.24 on PostgreSQL hung (issue 37's
 * notes in BENCHMARKS.md).
 */
export function createDeliveryWorker(deps: Deps, opts: WorkerOptions) {
  const log = deps.logger.child({ component: 'delivery-worker' });
  const batchSize = opts.batchSize ?? 500;
  const cursor = new TimeBucketCursor(MINUTE_MS, 30, opts.fullScanEveryMs ?? 10 * MINUTE_MS);
  const inFlight = new Map<string, Promise<void>>();
  const ready = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  /** When the timer runs out (real time, ms); a later wake-up never pushes back an earlier one. */
  let timerAt = Infinity;
  // Not started, a worker takes no work (e.g. an API-only composition beside replicas).
  let stopping = true;
  let passing: Promise<void> | undefined;
  let again = false;
  /**
   * Due work may be stored that no wake-up named: a lane stopped on its budget, a burst past the
   * ready limit, a pass that read a full batch. The next time the ready lanes run out, a pass.
   */
  let unseen = false;
  /**
   * The stream sequence of the earliest event a ready lane was named for: a lane whose event's
   * predecessors are not all taken in yet waits without a store call (in a burst, most do).
   */
  const wokenFor = new Map<string, { seq: number; deferred: number }>();
  /** Lanes to work again shortly. */
  const retries = createLaneRetries({ pollMs: opts.pollMs, clock: deps.clock, wake: (lanes) => wake(lanes) });
  /**
   * When each ready lane was last named (a count of namings and head reads, `namings`): a lane in
   * hand named before its head was read need not be worked again for it.
   */
  const namedAt = new Map<string, number>();
  let namings = 0;
  const subscriptions = createSubscriptionCache(
    (id) => deps.subscriptions.findLive(id),
    opts.subscriptionCacheMs,
  );

  /** The pending deliveries of the buckets to read now: due or not (those not due set the timer). */
  async function scannedDeliveries(now: Date): Promise<DueDelivery[]> {
    const nowMs = now.getTime();
    // Buckets up to two minutes ago go through the cursor; the last two are read every pass (a
    // delivery written late in a minute is then still found).
    const newest = minuteStart(nowMs) - 2 * MINUTE_MS;
    const plan = cursor.plan(nowMs, newest);
    const docs: DueDelivery[] = [];
    if (plan.full) {
      docs.push(...(await deps.deliveries.pending(batchSize)));
      cursor.fullDone(nowMs, newest);
    } else {
      for (const bucket of plan.buckets) {
        docs.push(...(await deps.deliveries.dueInMinute(minuteKey(bucket), batchSize)));
        cursor.bucketDone(bucket);
      }
    }
    for (const minute of [minuteStart(nowMs) - MINUTE_MS, minuteStart(nowMs)]) {
      docs.push(...(await deps.deliveries.dueInMinute(minuteKey(minute), batchSize)));
    }
    return docs.filter((d) => d.dueMinute !== null && d.nextAttemptAt);
  }

  /** The intake's floor; -1 (nothing taken in, as far as is known) when NATS does not answer. */
  async function intakeFloor(): Promise<number> {
    try {
      return await deps.intakeFloor();
    } catch (err) {
      log.debug({ err }, 'the intake floor is unknown; deliveries wait');
      return -1;
    }
  }

  /**
   * Works one lane while this replica holds it: its due deliveries, oldest first. Only a lane's
   * head needs to be findable by the scans: when the head waits for a retry, the deliveries
   * behind it are parked (no due minute) and go out right after it, from this loop. The lease is
   * kept for the whole run (renewed when it would not outlast an attempt), not claimed per attempt.
   */
  async function workLane(lane: string): Promise<LaneTurn> {
    // A few times at most: then the turn checks the head itself (its own event may be earlier
    // still, and free to go while a message between the two holds the floor).
    const woken = wokenFor.get(lane);
    if (woken && woken.deferred < MAX_DEFERRALS && (await intakeFloor()) < woken.seq - 1) {
      woken.deferred++;
      return { ended: 'behind' };
    }
    wokenFor.delete(lane);
    // The claim lasts `leaseMs` from the moment asked for, not from when the insert answered.
    const claim = await deps.leases.claim(lane, deps.clock(), { expectHeld: retries.wasTaken(lane) });
    if (!('lease' in claim)) return { ended: 'taken', dueAt: claim.heldUntil };
    const { lease } = claim;
    let head: DeliveryDoc | undefined;
    /** The delivery after the head when it was read: none, and the lane ends with its head. */
    let next: DeliveryDoc | undefined;
    let ended: LaneEnd = 'budget';
    let readAt = 0;
    try {
      for (let n = 0; n < 1000 && !stopping; n++) {
        // The intake's floor is read before the head: a head read first could miss the delivery of
        // an earlier event stored (and acked, raising the floor) between the two reads.
        const floor = await intakeFloor();
        readAt = ++namings;
        [head, next] = await deps.deliveries.laneHead(lane);
        const now = deps.clock();
        if (!head) {
          ended = 'empty';
          break;
        }
        if (!head.nextAttemptAt || new Date(head.nextAttemptAt) > now) {
          ended = 'waiting';
          break;
        }
        const sub = await subscriptions.get(head.subscriptionId);
        if (!sub) {
          await deps.deliveries.setState(head._id, {
            status: 'failed',
            nextAttemptAt: null,
            dueMinute: null,
          });
          continue;
        }
        if (!sub.active && head.eventId !== null) {
          // Held while the subscription is off: re-enabling makes its deliveries due again.
          await deps.deliveries.setState(head._id, { dueMinute: null });
          // Re-enabled since it was read? Then its resume may have run before this hold and been
          // undone by it (the delivery would wait for ever): due again, and the loop goes on. A
          // resume after this read comes after the hold too, and makes it due by itself.
          const again = await deps.subscriptions.findLive(head.subscriptionId);
          subscriptions.forget(head.subscriptionId);
          if (again?.active) {
            await deps.deliveries.setState(head._id, { dueMinute: minuteKey(deps.clock()) });
            continue;
          }
          ended = 'held';
          break;
        }
        // The intake stores events side by side (16 at once per replica, and across replicas), so
        // a lane's next delivery can be stored before the one of an earlier event of its resource:
        // a delivery goes out only once every event before it in the stream had been taken in
        // when the head was read. Until then it stays due, and the lane is worked again
        // `pollMs` later (also when NATS cannot say, in an outage: never at once).
        if (head.streamSeq && floor < head.streamSeq - 1) {
          ended = 'behind';
          break;
        }
        // An attempt starts only while the lease outlasts it and the writing of its outcome (an
        // attempt's time again): a lease that expired mid-attempt would let another replica send
        // the same delivery. Checked here, after this loop's reads, which a busy store makes slow.
        const kept = await keepLease(lease);
        if (kept !== 'kept') {
          ended = kept === 'lost' ? 'taken' : 'budget';
          break;
        }
        // No mark before the attempt: should this replica die during it, its lease stays behind,
        // expires, and a pass of a surviving replica works the lane again from the lease.
        const outcome = await deps.send({
          url: sub.url,
          id: head._id,
          payload: head.payload,
          secrets: signingSecrets(deps, sub, now),
          at: now,
        });
        const state = nextState(head, outcome, now, opts);
        await deps.deliveries.recordAttempt(head._id, { at: now.toISOString(), ...outcome }, state);
        deliveryAttempts.inc({ outcome: state.status === 'succeeded' ? 'success' : 'failure' });
        if (state.status === 'succeeded' && head.eventId !== null) observeLatency(head, deps.clock());
        // What it writes to the subscription drops the copy read (the repository tells the cache).
        await applyToSubscription(deps, sub, head, outcome, now, opts);
        if (state.status === 'pending') {
          // Still the lane's head (its oldest pending), now waiting for its retry.
          ended = 'waiting';
          head = { ...head, nextAttemptAt: state.nextAttemptAt };
          break;
        }
        head = undefined;
        // The head was the last: the lane is done without another read. What the intake stores
        // meanwhile names the lane again (it is worked again after), or is found by a pass.
        if (!next) {
          ended = 'empty';
          break;
        }
      }
      // Only when there was something behind it (what comes later is parked by a later turn).
      if (ended === 'waiting' && head && next) await deps.deliveries.parkBehind(lane, head._id);
      // Stopped with work left: the lane's head must be found by a later pass (here or elsewhere).
      if (ended === 'budget') {
        const [next] = await deps.deliveries.laneHead(lane);
        if (next) await deps.deliveries.setState(next._id, { dueMinute: minuteKey(deps.clock()) });
      }
    } finally {
      await lease.release();
    }
    return { ended, dueAt: ended === 'waiting' ? head?.nextAttemptAt : undefined, readAt };
  }

  /**
   * Whether the lease outlasts an attempt and the writing of its outcome (twice the attempt's
   * longest time), renewing it at half its life. A lease with less than an attempt's time left is
   * not renewed (the renewal itself could land after it expired and another replica took the lane
   * over): the run ends there, and the lane is worked again later.
   */
  async function keepLease(lease: LaneLease): Promise<'kept' | 'ending' | 'lost'> {
    const now = deps.clock();
    const left = lease.expiresAt.getTime() - now.getTime();
    if (left >= opts.leaseMs / 2 && left > opts.attemptMs * 2) return 'kept';
    if (left <= opts.attemptMs) return 'ending';
    if (!(await lease.renew(now))) return 'lost';
    return lease.expiresAt.getTime() - deps.clock().getTime() > opts.attemptMs * 2 ? 'kept' : 'ending';
  }

  /** Starts ready lanes while slots are free. */
  function startReady(): void {
    for (const lane of ready) {
      if (stopping || inFlight.size >= opts.concurrency) return;
      // A lane in hand stays ready: named again while worked, it is worked again after (what was
      // stored after its last read would otherwise wait for the sweep).
      if (inFlight.has(lane)) continue;
      ready.delete(lane);
      namedAt.delete(lane);
      const work = workLane(lane)
        .catch((err): LaneTurn => {
          log.warn({ err, lane }, 'delivery lane failed; retried on a later pass');
          return { ended: 'failed' };
        })
        .then(({ ended, dueAt, readAt }) => {
          inFlight.delete(lane);
          // Named again while worked, but before the head read that found it empty: what was
          // stored then was read (the intake names a lane once its deliveries are stored).
          if (ended === 'empty' && readAt !== undefined && (namedAt.get(lane) ?? Infinity) < readAt) {
            ready.delete(lane);
            wokenFor.delete(lane);
          }
          namedAt.delete(lane);
          // A lane that could not go on (behind the intake, another replica's, a store error) is
          // worked again a little later, not at once, and without a pass: it is known.
          if (ended === 'taken') retries.taken(lane, dueAt);
          else {
            retries.worked(lane);
            if (dueAt) dueBy(dueAt);
          }
          if (ended === 'behind' || ended === 'failed') retries.retry(lane);
          if (ended === 'budget') unseen = true;
          if (ready.size > 0) startReady();
          else if (unseen) {
            unseen = false;
            wake();
          }
        });
      inFlight.set(lane, work);
    }
  }

  async function pass(): Promise<void> {
    const now = deps.clock();
    await recoverLeases(now);
    const docs = await scannedDeliveries(now);
    if (docs.length >= batchSize) unseen = true;
    // Due or not as of the reads' answer: a delivery stored during them (due at once) is worked
    // now, not by another pass.
    const read = deps.clock();
    for (const doc of docs) {
      const dueAt = new Date(doc.nextAttemptAt!);
      if (dueAt > read) dueBy(dueAt);
      else if (!inFlight.has(doc.lane)) wake([doc.lane], doc.streamSeq);
    }
    startReady();
  }

  /** A pass in `ms` at the latest: an earlier one already set stays. */
  function scheduleIn(ms: number) {
    const at = Date.now() + Math.max(0, ms);
    if (stopping || at >= timerAt) return;
    clearTimeout(timer);
    timerAt = at;
    // setTimeout takes at most 2^31-1 ms; the sweep comes far sooner anyway.
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Infinity;
        run();
      },
      Math.min(at - Date.now(), 2 ** 31 - 1),
    );
    timer.unref();
  }

  /**
   * The lanes whose lease a replica left behind by dying mid-lane (no store write marks a delivery
   * in flight: the lease is the mark) are worked again once it has expired; the earliest lease
   * still running sets a pass for when it runs out.
   */
  async function recoverLeases(now: Date) {
    let earliest = Infinity;
    const expired: string[] = [];
    for (const held of await deps.leases.held()) {
      if (inFlight.has(held._id)) continue;
      const at = new Date(held.expiresAt).getTime();
      if (at <= now.getTime()) expired.push(held._id);
      else earliest = Math.min(earliest, at);
    }
    if (expired.length > 0) wake(expired);
    if (earliest < Infinity) scheduleIn(earliest - now.getTime() + 1);
  }

  /** A delivery is due at `at` (the worker's clock): a pass then. */
  function dueBy(at: Date) {
    scheduleIn(at.getTime() - deps.clock().getTime());
  }

  function run() {
    if (passing) {
      again = true;
      return;
    }
    passing = pass()
      .catch((err) => log.warn({ err }, 'delivery pass failed'))
      .finally(() => {
        passing = undefined;
        if (again) {
          again = false;
          scheduleIn(0);
        } else scheduleIn(opts.sweepMs);
      });
  }

  /** New work is due now: the lanes named go to the ready ones; none named, a pass soon. */
  function wake(lanes?: readonly string[], streamSeq?: number | null) {
    if (stopping) return;
    if (lanes?.length) {
      // Bounded: past it, a burst's lanes are found by the scans instead.
      for (const lane of lanes) {
        if (ready.size >= READY_LIMIT) {
          unseen = true;
          wokenFor.delete(lane);
          continue;
        }
        ready.add(lane);
        namedAt.set(lane, ++namings);
        const woken = wokenFor.get(lane);
        if (streamSeq) wokenFor.set(lane, { seq: Math.min(streamSeq, woken?.seq ?? streamSeq), deferred: 0 });
      }
      startReady();
      return;
    }
    if (passing) again = true;
    else scheduleIn(5);
  }

  return {
    start() {
      stopping = false;
      cursor.requestFull();
      scheduleIn(0);
    },
    wake,
    /** A subscription was written: its next attempt reads it again (see `subscriptionCacheMs`). */
    forgetSubscription: (id?: string) => subscriptions.forget(id),
    /** Stops taking work and waits for the attempts in hand (their lanes are released). */
    async stop() {
      stopping = true;
      ready.clear();
      namedAt.clear();
      clearTimeout(timer);
      retries.clear();
      wokenFor.clear();
      timerAt = Infinity;
      await passing;
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}
