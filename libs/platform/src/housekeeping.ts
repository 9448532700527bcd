import type { Logger } from './logger.js';

export interface PeriodicTask<T> {
  /** Runs a pass now, or joins the pass already running (passes never overlap). */
  runNow(): Promise<T>;
  /** Starts passes every `intervalMs` (the first one at once). Idempotent. */
  start(): void;
  /** Stops the timer and waits for a running pass. */
  stop(): Promise<void>;
}

/**
 * A background job run every `intervalMs` in this process: one pass at a time, a failed pass is
 * logged and the next one retries, and the timer never keeps the process alive. Every replica runs
 * its own, so a pass must be safe to run concurrently with another replica's.
 */
export function periodicTask<T>(opts: {
  name: string;
  intervalMs: number;
  logger: Logger;
  run: () => Promise<T>;
  /** What a failed pass returns to `runNow` callers. */
  onError: T;
}): PeriodicTask<T> {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<T> | undefined;
  const runNow = (): Promise<T> => {
    running ??= opts
      .run()
      .catch((err: unknown) => {
        opts.logger.error({ err, task: opts.name }, `${opts.name} failed; the next pass retries`);
        return opts.onError;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  return {
    runNow,
    start() {
      if (timer) return;
      timer = setInterval(() => void runNow(), opts.intervalMs);
      timer.unref();
      void runNow();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}

/** Documents a back-fill at start completes per batch, and batches at most per start. */
const BACKFILL_BATCH = 500;
const BACKFILL_BATCHES_MAX = 1000;

/**
 * Gives documents stored before a derived key existed that key, at start: `completeBatch(n)`
 * completes at most `n` and says how many it did; batches run until one completes fewer (all
 * done) or a start's maximum (the next start goes on). Logged as `what` (`stored events given
 * their list keys`), never fatal: what reads the keys still answers without the old documents.
 */
export async function backfillAtStart(
  logger: Logger,
  what: string,
  completeBatch: (limit: number) => Promise<number>,
): Promise<void> {
  try {
    let completed = 0;
    for (let batch = 0; batch < BACKFILL_BATCHES_MAX; batch++) {
      const n = await completeBatch(BACKFILL_BATCH);
      completed += n;
      if (n < BACKFILL_BATCH) break;
    }
    if (completed > 0) logger.info({ completed }, what);
  } catch (err) {
    logger.warn({ err }, `${what} failed; retried at the next start`);
  }
}
