/**
 * Time as equality. FerretDB v1 pushes down to its backend only equality conditions (on SQLite
 * only `_id`; on PostgreSQL top-level scalar fields too), never a range like `{at: {$lte: now}}`,
 * which makes it decode every document of the collection. So background work that looks for
 * "what came due since the last pass" keeps, on each document, the minute or hour its moment
 * falls in as a string field, and asks for each bucket since its last pass by equality: on
 * PostgreSQL only the matching documents are decoded, on MongoDB an index answers, and on SQLite
 * it is one query per bucket instead of one per pass.
 */
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The minute (UTC) `at` falls in, as stored in a bucket field: `2030-01-01T09:05`. */
export const minuteKey = (at: Date | number): string => new Date(at).toISOString().slice(0, 16);

/** The hour (UTC) `at` falls in, as stored in a bucket field: `2030-01-01T09`. */
export const hourKey = (at: Date | number): string => new Date(at).toISOString().slice(0, 13);

/** The day (UTC) `at` falls in, as stored in a bucket field: `2030-01-01`. */
export const dayKey = (at: Date | number): string => new Date(at).toISOString().slice(0, 10);

/** The month (UTC) `at` falls in, as stored in a bucket field: `2030-01`. */
export const monthKey = (at: Date | number): string => new Date(at).toISOString().slice(0, 7);

/** The start of the month `months` after (or before) the one `ms` falls in (epoch ms, UTC). */
export const monthStart = (ms: number, months = 0): number => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1);
};

/** The start of the bucket of `bucketMs` (a minute, an hour) that `ms` falls in (epoch ms). */
export const bucketStart = (ms: number, bucketMs: number): number =>
  ms - (((ms % bucketMs) + bucketMs) % bucketMs);

/** The start of the minute `ms` falls in (epoch milliseconds). */
export const minuteStart = (ms: number): number => bucketStart(ms, MINUTE_MS);

/**
 * Where a pass over time buckets (minutes, hours) has got to: every bucket up to `sweptThrough`
 * (a bucket's start) has been read. A pass reads the buckets after it up to the newest one it may
 * read yet; when that is more than `maxBuckets` buckets (a first pass, a long pause) or
 * `fullEveryMs` has passed since the last full pass, it reads in full instead (the condition
 * without buckets), which also catches a document whose bucket was read before its write landed.
 */
export class TimeBucketCursor {
  private sweptThrough: number | undefined;
  private fullAt = 0;
  private fullRequested = true;

  constructor(
    private readonly bucketMs: number,
    private readonly maxBuckets: number,
    private readonly fullEveryMs: number,
  ) {}

  /** The next pass reads in full (start-up, or a caller who must see everything pending). */
  requestFull(): void {
    this.fullRequested = true;
  }

  /**
   * What the pass at `now` reads: `full`, or the bucket starts (oldest first) up to `newest`
   * (a bucket start) not yet read.
   */
  plan(now: number, newest: number): { full: true } | { full: false; buckets: number[] } {
    const behind = this.sweptThrough === undefined ? Infinity : (newest - this.sweptThrough) / this.bucketMs;
    if (this.fullRequested || behind > this.maxBuckets || now - this.fullAt >= this.fullEveryMs) {
      return { full: true };
    }
    const buckets: number[] = [];
    for (
      let b = this.sweptThrough! + this.bucketMs;
      b <= newest && buckets.length < this.maxBuckets;
      b += this.bucketMs
    )
      buckets.push(b);
    return { full: false, buckets };
  }

  /** A full pass finished at `now`: everything up to `newest` is read. */
  fullDone(now: number, newest: number): void {
    this.fullRequested = false;
    this.fullAt = now;
    this.sweptThrough = Math.max(this.sweptThrough ?? newest, newest);
  }

  /** Bucket `bucket` (a bucket start) is read to its end. */
  bucketDone(bucket: number): void {
    if (this.sweptThrough === undefined || bucket > this.sweptThrough) this.sweptThrough = bucket;
  }
}

/**
 * How often a pass by buckets reads in full anyway (the exact condition without buckets): it
 * catches the documents no bucket covers — written before the buckets existed, or due in a bucket
 * already read. In the core, as the cursor it tunes, so a use case's own pass can use it.
 */
export const FULL_PASS_EVERY_MS = 24 * HOUR_MS;
