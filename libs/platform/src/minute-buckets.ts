/**
 * Time as equality. FerretDB v1 pushes down to its backend only equality conditions (on SQLite
 * only `_id`; on PostgreSQL top-level scalar fields too), never a range like `{at: {$lte: now}}`,
 * which makes it decode every document of the collection. So background work that looks for
 * "what came due since the last pass" keeps, on each document, the minute its next moment falls
 * in as a string field, and asks for each minute since its last pass by equality: on PostgreSQL
 * only the matching documents are decoded, on MongoDB an index answers, and on SQLite it is one
 * query per minute instead of one per pass.
 */
export const MINUTE_MS = 60_000;

/** The minute (UTC) `at` falls in, as stored in a bucket field: `2030-01-01T09:05`. */
export const minuteKey = (at: Date | number): string => new Date(at).toISOString().slice(0, 16);

/** The start of the minute `ms` falls in (epoch milliseconds). */
export const minuteStart = (ms: number): number => ms - (((ms % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);

/**
 * Where a pass over minute buckets has got to: every minute up to `sweptThrough` (a minute's
 * start) has been read. A pass reads the minutes after it up to the newest one it may read yet;
 * when that is more than `maxMinutes` minutes (a first pass, a long pause) or `fullEveryMs` has
 * passed since the last full pass, it reads in full instead (the condition without buckets), which
 * also catches a document whose bucket was swept before its write landed.
 */
export class MinuteCursor {
  private sweptThrough: number | undefined;
  private fullAt = 0;
  private fullRequested = true;

  constructor(
    private readonly maxMinutes: number,
    private readonly fullEveryMs: number,
  ) {}

  /** The next pass reads in full (start-up, or a caller who must see everything pending). */
  requestFull(): void {
    this.fullRequested = true;
  }

  /**
   * What the pass at `now` reads: `full`, or the minute starts (oldest first) up to `newest`
   * (a minute start) not yet read.
   */
  plan(now: number, newest: number): { full: true } | { full: false; minutes: number[] } {
    const behind = this.sweptThrough === undefined ? Infinity : (newest - this.sweptThrough) / MINUTE_MS;
    if (this.fullRequested || behind > this.maxMinutes || now - this.fullAt >= this.fullEveryMs) {
      return { full: true };
    }
    const minutes: number[] = [];
    for (
      let m = this.sweptThrough! + MINUTE_MS;
      m <= newest && minutes.length < this.maxMinutes;
      m += MINUTE_MS
    )
      minutes.push(m);
    return { full: false, minutes };
  }

  /** A full pass finished at `now`: everything up to `newest` is read. */
  fullDone(now: number, newest: number): void {
    this.fullRequested = false;
    this.fullAt = now;
    this.sweptThrough = Math.max(this.sweptThrough ?? newest, newest);
  }

  /** Minute `minute` (a minute start) is read to its end. */
  minuteDone(minute: number): void {
    if (this.sweptThrough === undefined || minute > this.sweptThrough) this.sweptThrough = minute;
  }
}
