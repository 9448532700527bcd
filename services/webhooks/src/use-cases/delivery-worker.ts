import { counter, MINUTE_MS, minuteKey, minuteStart, TimeBucketCursor } from '@support-desk/platform';
import type { DeliveryDoc, DueDelivery } from '../store/deliveries.js';
import type { SubscriptionDoc } from '../store/subscriptions.js';
import { applyToSubscription, nextState, type RetryPolicy } from './attempt-outcome.js';
import type { Deps } from './deps.js';
import { signingSecrets } from './subscriptions.js';

export interface WorkerOptions extends RetryPolicy {
  pollMs: number;
  /** Lanes this replica works at once. */
  concurrency: number;
  /** How long a lane claim lasts; the worker stops taking new attempts on a lane well before. */
  leaseMs: number;
  /** The longest one attempt may take (connect + response timeouts). */
  attemptMs: number;
  /** Deliveries read per bucket or full pass. */
  batchSize?: number;
  fullScanEveryMs?: number;
}

/**
 * How a turn on a lane ended: nothing pending, its head waiting for a retry, held (subscription
 * off, or another replica's claim), out of budget, behind the intake, or failed.
 */
type LaneEnd = 'empty' | 'waiting' | 'held' | 'budget' | 'behind' | 'failed';

/** The most lanes kept ready in memory. */
const READY_LIMIT = 10_000;

const attempts = counter('webhook_delivery_attempts_total', 'Delivery attempts by outcome', ['outcome']);

/**
 * The delivery worker. Due deliveries are found by their due minute (equality reads: the minutes
 * since the last pass, plus the last two minutes every pass; a full read of the pending ones at
 * start and every `fullScanEveryMs`). Each is attempted only through its lane (subscription +
 * resource): the replica that claims the lane (a unique insert, expiring) attempts the lane's
 * oldest pending delivery, then the next while they are due, so events of one resource reach a
 * subscriber in order, and no delivery is attempted by two replicas at once.
 *
 * Lanes known to be due wait in `ready` for a free slot: those a pass found, and those the intake
 * names as it stores new deliveries. A finished lane takes the next ready one; the store is read
 * again only when none is left (a pass per finished lane re-read the same minute's deliveries
 * each time: the work grew with the square of a burst).
 */
export function createDeliveryWorker(deps: Deps, opts: WorkerOptions) {
  const log = deps.logger.child({ component: 'delivery-worker' });
  const batchSize = opts.batchSize ?? 500;
  const cursor = new TimeBucketCursor(MINUTE_MS, 30, opts.fullScanEveryMs ?? 10 * MINUTE_MS);
  const inFlight = new Map<string, Promise<void>>();
  const ready = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  // Not started, a worker takes no work (e.g. an API-only composition beside replicas).
  let stopping = true;
  let passing: Promise<void> | undefined;
  let again = false;

  async function dueDeliveries(now: Date): Promise<DueDelivery[]> {
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
    return docs.filter((d) => d.dueMinute !== null && d.nextAttemptAt && new Date(d.nextAttemptAt) <= now);
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
   * behind it are parked (no due minute) and go out right after it, from this loop.
   */
  async function workLane(lane: string): Promise<LaneEnd> {
    // The claim lasts `leaseMs` from the moment asked for, not from when the insert answered.
    const claimedAt = deps.clock().getTime();
    const release = await deps.leases.claim(lane, new Date(claimedAt));
    if (!release) return 'held';
    const subs = new Map<string, SubscriptionDoc | null>();
    let head: DeliveryDoc | undefined;
    let ended: LaneEnd = 'budget';
    try {
      for (let n = 0; n < 1000 && !stopping; n++) {
        // The intake's floor is read before the head: a head read first could miss the delivery of
        // an earlier event stored (and acked, raising the floor) between the two reads.
        const floor = await intakeFloor();
        [head] = await deps.deliveries.laneHead(lane);
        const now = deps.clock();
        if (!head) {
          ended = 'empty';
          break;
        }
        if (!head.nextAttemptAt || new Date(head.nextAttemptAt) > now) {
          ended = 'waiting';
          break;
        }
        if (!subs.has(head.subscriptionId)) {
          subs.set(head.subscriptionId, await deps.subscriptions.findLive(head.subscriptionId));
        }
        const sub = subs.get(head.subscriptionId)!;
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
          if (again?.active) {
            await deps.deliveries.setState(head._id, { dueMinute: minuteKey(deps.clock()) });
            subs.delete(head.subscriptionId);
            continue;
          }
          ended = 'held';
          break;
        }
        // The intake stores events side by side (16 at once per replica, and across replicas), so
        // a lane's next delivery can be stored before the one of an earlier event of its resource:
        // a delivery goes out only once every event before it in the stream had been taken in
        // when the head was read. Until then it stays due, for the next pass; so when NATS cannot
        // say (an outage), the lane waits for the regular passes instead of being tried at once.
        if (head.streamSeq && floor < head.streamSeq - 1) {
          ended = 'behind';
          break;
        }
        // An attempt starts only while the claim outlasts it and the writing of its outcome (an
        // attempt's time again): a claim that expired mid-attempt would let another replica send
        // the same delivery. Checked here, after this loop's reads, which a busy store makes slow.
        if (deps.clock().getTime() - claimedAt + opts.attemptMs * 2 > opts.leaseMs) break;
        // Should this replica die during the attempt, the scans find the delivery again in the
        // minute its claim has expired by.
        await deps.deliveries.setState(head._id, { dueMinute: minuteKey(now.getTime() + opts.leaseMs) });
        const outcome = await deps.send({
          url: sub.url,
          id: head._id,
          payload: head.payload,
          secrets: signingSecrets(deps, sub, now),
          at: now,
        });
        const state = nextState(head, outcome, now, opts);
        await deps.deliveries.recordAttempt(head._id, { at: now.toISOString(), ...outcome }, state);
        attempts.inc({ outcome: state.status === 'succeeded' ? 'success' : 'failure' });
        await applyToSubscription(deps, sub, head, outcome, now, opts);
        subs.delete(head.subscriptionId);
        head = undefined;
        if (state.status === 'pending') {
          ended = 'waiting';
          [head] = await deps.deliveries.laneHead(lane);
          break;
        }
      }
      if (ended === 'waiting' && head) await deps.deliveries.parkBehind(lane, head._id);
      // Stopped with work left: the lane's head must be found by a later pass (here or elsewhere).
      if (ended === 'budget') {
        const [next] = await deps.deliveries.laneHead(lane);
        if (next) await deps.deliveries.setState(next._id, { dueMinute: minuteKey(deps.clock()) });
      }
    } finally {
      await release();
    }
    return ended;
  }

  /** Starts ready lanes while slots are free; a lane already in hand is left to its worker. */
  function startReady(): void {
    for (const lane of ready) {
      if (stopping || inFlight.size >= opts.concurrency) return;
      ready.delete(lane);
      if (inFlight.has(lane)) continue;
      const work = workLane(lane)
        .catch((err): LaneEnd => {
          log.warn({ err, lane }, 'delivery lane failed; retried on a later pass');
          return 'failed';
        })
        .then((ended) => {
          inFlight.delete(lane);
          if (ready.size > 0) startReady();
          // A lane behind the intake waits for the next regular pass, not for one at once.
          else if (ended !== 'behind') wake();
        });
      inFlight.set(lane, work);
    }
  }

  async function pass(): Promise<void> {
    const docs = await dueDeliveries(deps.clock());
    for (const doc of docs) if (!inFlight.has(doc.lane)) ready.add(doc.lane);
    startReady();
  }

  function schedule(ms: number) {
    if (stopping) return;
    clearTimeout(timer);
    timer = setTimeout(run, ms);
    timer.unref();
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
          schedule(0);
        } else schedule(opts.pollMs);
      });
  }

  /** New work is due now: the lanes named go to the ready ones; none named, a pass soon. */
  function wake(lanes?: readonly string[]) {
    if (stopping) return;
    if (lanes?.length) {
      // Bounded: past it, a burst's lanes are found by the scans instead.
      for (const lane of lanes) if (ready.size < READY_LIMIT) ready.add(lane);
      startReady();
      return;
    }
    if (passing) again = true;
    else schedule(5);
  }

  return {
    start() {
      stopping = false;
      cursor.requestFull();
      schedule(0);
    },
    wake,
    /** Stops taking work and waits for the attempts in hand (their lanes are released). */
    async stop() {
      stopping = true;
      ready.clear();
      clearTimeout(timer);
      await passing;
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
