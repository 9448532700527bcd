import { createHash, randomBytes } from 'node:crypto';
import { Command } from 'ioredis';
import type { RedisClient } from './redis-client.js';
import type { RefusalMemory } from './refusal-memory.js';
import { SLIDING_WINDOW_BATCH } from './sliding-window-script.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch seconds (integer) when at least one more call is admitted. */
  resetAt: number;
  /**
   * Whole seconds until then, by Redis' clock: 1 to `windowSeconds` (a window's reset is never
   * further away than the window). `Retry-After` on a refusal, and the `t` of `RateLimit`.
   */
  retryAfter: number;
  windowSeconds: number;
}

/**
 * One script call carries at most this many decisions, so Redis is never held long by one
 * (≈ 2 µs a call); a larger turn is split into several calls sent together.
 */
const MAX_CALLS_PER_SCRIPT = 128;

const SCRIPT_SHA = createHash('sha1').update(SLIDING_WINDOW_BATCH).digest('hex');

interface PendingCall {
  key: string;
  limit: number;
  record: boolean;
  /** Units the call takes, all or nothing (1 for a call). */
  weight: number;
  resolve: (decision: RateDecision) => void;
  reject: (err: unknown) => void;
}

/**
 * The Redis side of the limiter: the calls made during one event-loop turn (the requests whose
 * data arrived in the same poll) are decided by one script call, sent when the turn's I/O
 * callbacks are done (`setImmediate`, the moment ioredis' auto-pipelining would have written
 * their separate scripts). No call waits for a later turn, and Redis and this process pay one
 * command's overhead per turn instead of one per call. Refusals are remembered in `refusals`.
 */
export function createSlidingWindowBatch(
  redis: RedisClient,
  windowSeconds: number,
  refusals: RefusalMemory,
  /** On a Redis Cluster, the slot of a key: a script call then carries the calls of one slot. */
  slotOf: ((key: string) => number) | null = null,
) {
  const windowMs = windowSeconds * 1000;
  const instance = randomBytes(4).toString('hex');
  let batchNumber = 0;
  let pending: PendingCall[] = [];
  let scheduled = false;

  /**
   * EVALSHA written at once, not through ioredis' auto-pipelining: that would hold it for
   * another turn (its own `setImmediate`, and no second pipeline while one is in flight).
   */
  async function run(args: (string | number)[]): Promise<number[]> {
    try {
      return (await redis.sendCommand(new Command('evalsha', args))) as number[];
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      // Redis restarted or flushed its scripts: EVAL runs it and caches it again.
      return (await redis.sendCommand(
        new Command('eval', [SLIDING_WINDOW_BATCH, ...args.slice(1)]),
      )) as number[];
    }
  }

  function settle(calls: PendingCall[], sentAt: number, out: number[]): void {
    const nowMs = out[0];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i];
      const allowed = out[1 + i * 3] === 1;
      const resetMs = out[3 + i * 3];
      // A weighted call refused may leave room for single calls: only a call's refusal is remembered.
      if (!allowed && call.weight === 1)
        refusals.note(call.key, call.limit, sentAt + (resetMs - nowMs) - 1, Math.ceil(resetMs / 1000));
      call.resolve({
        allowed,
        limit: call.limit,
        remaining: Math.max(0, out[2 + i * 3]),
        resetAt: Math.ceil(resetMs / 1000),
        // Capped for a step back of Redis' clock, which could put the oldest call in the future.
        retryAfter: Math.min(windowSeconds, Math.max(1, Math.ceil((resetMs - nowMs) / 1000))),
        windowSeconds,
      });
    }
  }

  function send(calls: PendingCall[]): void {
    const n = calls.length;
    // EVALSHA sha numkeys key_1 … key_n window tag limit_1 … limit_n [weight_1 … weight_n]
    const weighted = calls.some((c) => c.weight !== 1);
    const args: (string | number)[] = new Array(n * (weighted ? 3 : 2) + 4);
    args[0] = SCRIPT_SHA;
    args[1] = n;
    args[n + 2] = windowMs;
    args[n + 3] = `${instance}:${batchNumber}:`;
    batchNumber = (batchNumber + 1) % 1_000_000_000;
    for (let i = 0; i < n; i++) {
      args[2 + i] = calls[i].key;
      args[n + 4 + i] = calls[i].record ? calls[i].limit : -calls[i].limit;
      if (weighted) args[2 * n + 4 + i] = calls[i].weight;
    }
    // Before the write, hence before Redis reads its clock: see RefusalMemory.
    const sentAt = performance.now();
    run(args).then(
      (out) => settle(calls, sentAt, out),
      (err: unknown) => {
        for (const call of calls) call.reject(err);
      },
    );
  }

  function sendAll(calls: PendingCall[]): void {
    if (calls.length <= MAX_CALLS_PER_SCRIPT) send(calls);
    else
      for (let from = 0; from < calls.length; from += MAX_CALLS_PER_SCRIPT)
        send(calls.slice(from, from + MAX_CALLS_PER_SCRIPT));
  }

  function flush(): void {
    scheduled = false;
    const calls = pending;
    pending = [];
    if (!slotOf || calls.length === 1) {
      sendAll(calls);
      return;
    }
    // A Cluster refuses a script whose keys lie in several slots (CROSSSLOT): one call per slot,
    // all sent in this turn (ioredis writes each to its slot's primary).
    const bySlot = new Map<number, PendingCall[]>();
    for (const call of calls) {
      const slot = slotOf(call.key);
      const group = bySlot.get(slot);
      if (group) group.push(call);
      else bySlot.set(slot, [call]);
    }
    for (const group of bySlot.values()) sendAll(group);
  }

  return {
    /** Decides one call against `key` (a full Redis key) with the other calls of this turn. */
    decide(key: string, limit: number, record: boolean, weight = 1): Promise<RateDecision> {
      return new Promise((resolve, reject) => {
        pending.push({ key, limit, record, weight, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
