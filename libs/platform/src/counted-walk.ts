import type { CursorKeyValue } from './cursor.js';
import {
  hourWalk,
  type HourWalkOrder,
  type HourWalkStep,
  type StepMaker,
  type WalkFeedback,
} from './hour-walk.js';
import { bucketStart, DAY_MS, dayKey, HOUR_MS, hourKey, monthKey, monthStart } from './time-buckets.js';
import type { WalkSpan } from './walk-bounds.js';

/**
 * A walk whose steps are chosen by what its span holds (issue 31/37): the users lists. An hour
 * walk (`hourWalk`) reads the hours of the day it starts in, then whole days, whatever they hold:
 * a day of a densely filled directory (a sync, an import: 1,440 users a day in the lists bench) is
 * then one step that decodes and sorts all of them on FerretDB, and a quiet year costs a lookup a
 * day. A counted span (`walkBounds`' `days`: about how many items each day holds, and a key for
 * every day that holds one) lets each step be sized to the walk's need instead: a day without
 * items costs nothing (skipped), the rest of a month whose days hold few is one step (its month
 * key), a day holding few one step, and a day holding more than the walk wants (the page's rest,
 * or the count's) its hours one by one, until the rest of the day fits. So a step decodes about
 * `STEP_DOCUMENTS` (or what the walk still wants, at most twice) when the data is dense, and a
 * sparse list crosses a year in a dozen steps. The counts are hints (walk-bounds.ts): they size the
 * steps, the steps' equalities and ranges still decide what a list holds. An hour is the finest
 * step: an hour holding thousands (one bulk import) is still one step.
 */

/** What one step may hold when the walk wants little (a page's rest). */
export const STEP_DOCUMENTS = 200;

/** The steps of a counted span's walk (`hourWalk`'s arguments; `span.days` the day counts). */
export function countedWalk(
  order: HourWalkOrder,
  ascending: boolean,
  span: WalkSpan,
  from?: readonly CursorKeyValue[],
): Generator<HourWalkStep, void, WalkFeedback | undefined> {
  const days = span.days ?? {};
  return hourWalk(order, ascending, span, from, (step, at, within) =>
    countedSteps(order, ascending, step, at, within, days),
  );
}

function* countedSteps(
  order: HourWalkOrder,
  ascending: boolean,
  step: StepMaker,
  at: number,
  span: { oldest: number; newest: number },
  days: Record<string, number>,
): Generator<HourWalkStep, void, WalkFeedback | undefined> {
  const dir = ascending ? 1 : -1;
  const countOf = (d: number) => days[dayKey(d)] ?? 0;
  const [first, last] = [bucketStart(span.oldest, HOUR_MS), bucketStart(span.newest, HOUR_MS) + HOUR_MS];
  // What a step may hold: more when the walk wants more (a count's rest), never under STEP_DOCUMENTS.
  let fits = STEP_DOCUMENTS;
  const learn = (feedback: WalkFeedback | undefined) => {
    if (feedback) fits = Math.max(STEP_DOCUMENTS, 2 * feedback.want);
  };
  // Where the part still to read begins (ascending) or ends (descending).
  let edge = ascending ? bucketStart(at, HOUR_MS) : bucketStart(at, HOUR_MS) + HOUR_MS;
  const [firstDay, lastDay] = [bucketStart(first, DAY_MS), bucketStart(last - 1, DAY_MS)];
  for (let d = bucketStart(at, DAY_MS); d >= firstDay && d <= lastDay; d += dir * DAY_MS) {
    const n = countOf(d);
    // The day's part still to read: [lo, hi).
    const lo = Math.max(d, first, ascending ? edge : -Infinity);
    const hi = Math.min(d + DAY_MS, last, ascending ? Infinity : edge);
    if (n === 0 || lo >= hi) continue;
    if (order.month) {
      // The rest of the month in one step, when its days hold few.
      const [m0, m1] = [monthStart(d), monthStart(d, 1)];
      let sum = 0;
      let held = 0;
      for (let e = d; e >= Math.max(m0, firstDay) && e < m1 && e <= lastDay; e += dir * DAY_MS) {
        sum += countOf(e);
        if (countOf(e) > 0) held++;
      }
      if (held > 1 && sum <= fits) {
        const [from, to] = ascending ? [lo, Math.min(m1, last)] : [Math.max(m0, first), hi];
        learn(yield step(from, to - from, order.month, monthKey(d)));
        edge = ascending ? to : from;
        d = ascending ? m1 - DAY_MS : m0;
        continue;
      }
    }
    if (n <= fits) {
      learn(yield step(lo, hi - lo, order.day, dayKey(d)));
      edge = ascending ? hi : lo;
      continue;
    }
    // More than a step may hold: its hours, until the rest of the day fits one step (a count's rest).
    for (let h = ascending ? lo : hi - HOUR_MS; h >= lo && h < hi; h += dir * HOUR_MS) {
      learn(yield step(h, HOUR_MS, order.hour, hourKey(h)));
      edge = ascending ? h + HOUR_MS : h;
      const [from, to] = ascending ? [edge, hi] : [lo, edge];
      if (n > fits || from >= to) continue;
      learn(yield step(from, to - from, order.day, dayKey(d)));
      edge = ascending ? to : from;
      break;
    }
  }
}
