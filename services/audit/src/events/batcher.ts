interface BatchOutcome {
  /** Items the write refused individually, by index in the batch; every other item is stored. */
  failed: Map<number, Error>;
}

export interface BatcherOptions<T> {
  /** Writes one batch; throwing fails every item of it. */
  write: (items: T[]) => Promise<BatchOutcome>;
  /** Items per write; reaching it flushes at once. */
  maxBatch: number;
  /** Longest an item waits for companions before its (partial) batch is written. */
  flushMs: number;
  /** Writes in flight at once; further full batches wait for one to finish. */
  maxConcurrentWrites: number;
  onBatch?: (size: number, ms: number, error?: unknown) => void;
}

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Groups items into batched writes. `add` resolves only once the batch holding the item has been
 * written, and rejects when the write (or that item) failed, so the caller acks a message
 * only after it is durably stored.
 */
export class Batcher<T> {
  private pending: Waiting<T>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing = 0;
  private readonly writes = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly opts: BatcherOptions<T>) {}

  add(item: T): Promise<void> {
    if (this.closed) return Promise.reject(new Error('batcher closed'));
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.opts.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(true), this.opts.flushMs);
    });
  }

  /** Items waiting for a write (not yet in flight). */
  get queued(): number {
    return this.pending.length;
  }

  /** Writes everything queued and waits for every write in flight; later `add`s are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.pending.length > 0 || this.writes.size > 0) {
      this.flush(true);
      await Promise.race(this.writes);
    }
  }

  /** Starts writes while allowed: full batches, or a partial one when `partial` (timer fired). */
  private flush(partial = false): void {
    if (partial) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (
      this.writing < this.opts.maxConcurrentWrites &&
      (this.pending.length >= this.opts.maxBatch || (partial && this.pending.length > 0))
    ) {
      this.startWrite(this.pending.splice(0, this.opts.maxBatch));
    }
    if (this.pending.length === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
    } else if (this.writing < this.opts.maxConcurrentWrites) {
      // The rest waits at most flushMs; with every write slot busy it goes when one frees up.
      this.timer ??= setTimeout(() => this.flush(true), this.opts.flushMs);
    }
  }

  private startWrite(batch: Waiting<T>[]): void {
    this.writing++;
    const started = Date.now();
    const run = (async () => {
      try {
        const { failed } = await this.opts.write(batch.map((w) => w.item));
        this.opts.onBatch?.(batch.length, Date.now() - started);
        batch.forEach((w, i) => {
          const err = failed.get(i);
          if (err) w.reject(err);
          else w.resolve();
        });
      } catch (err) {
        this.opts.onBatch?.(batch.length, Date.now() - started, err);
        for (const w of batch) w.reject(err);
      }
    })();
    const tracked = run.finally(() => {
      this.writing--;
      this.writes.delete(tracked);
      // A full batch may have been held back by the write limit; partial ones keep their timer.
      this.flush(this.pending.length > 0 && this.timer === undefined);
    });
    this.writes.add(tracked);
  }
}
