import { LIST_COUNT_LIMIT, LIST_COUNT_STEPS_PAST_PAGE } from '@support-desk/contracts';
import type { CursorKeyValue } from './cursor.js';
import { bucketStart, DAY_MS, dayKey, HOUR_MS, hourKey } from './time-buckets.js';

/**
 * Lists read a few hours and then a day at a time (issue 31). FerretDB on PostgreSQL pushes down
 * only top-level scalar equalities and never a sort or a limit beside a filter, so a list read in
 * one query decodes and sorts every document its equalities match: all of them without a filter,
 * thousands with a common status. Each document keeps the hour and the day of its list's time
 * key as strings (`createdHour`: `2030-01-01T09`, `createdDay`: `2030-01-01`), and a list reads
 * them one at a time in its order, the filter's equalities and the hour's (or the day's) beside
 * each other at the top of the query (GIN lookups on PostgreSQL, which decode only the rows
 * matching all of them; on MongoDB the time key's range of that hour or day, from the list's
 * usual index), until the page is full: the hours of the day it starts in, where a page of a
 * busy list is found (or, once one holds no match, a look at whether the rest of that day holds
 * any), then whole days, so that a sparse filter crosses a quiet month in thirty
 * lookups. What is checked in Go (`$in`, ranges, a search, `deletedAt: null`) costs at most one
 * hour or day of the collection. A call reads at most `maxSteps` of them (and a search for at
 * most its time budget): past them it answers what it found and a cursor to the next one.
 */

/**
 * The steps a list call reads at most (`HourWalkBudget.maxSteps`): a day of hours and then three
 * months of days, each an index lookup that finds nothing when the hour or day holds no match.
 * Past them the call answers what it found and a cursor to where it stopped (docs/api-guide.md,
 * "Overload"). The audit and webhooks lists use it; the requests lists keep their own, the same.
 */
export const WALK_STEPS_PER_CALL = 120;

/** How a list's order maps onto hours and days. */
export interface HourWalkOrder {
  /** The time sort key (`createdAt`) and the stored fields holding its hour and day. */
  time: string;
  hour: string;
  day: string;
  /**
   * The stored field holding its month (`createdMonth`: `2030-01`), for documents spread thinly
   * over years (users): a counted walk (`countedWalk`) reads the rest of a month in one step when
   * its days hold few.
   */
  month?: string;
  /** A sort key before the time with few values (a rank), its values ascending: each in turn. */
  lead?: { field: string; values: readonly number[] };
}

/** One step of a walk (`walkHours`): where it ends. */
export interface WalkStep {
  /** The equalities selecting the step's documents, beside the list's filter. */
  where: Record<string, string | number>;
  /** A position past every document of the step in reading order: where a later call resumes. */
  past: { keys: CursorKeyValue[]; id: string };
}

/** One hour, day or month of the walk (of one lead value): its equalities, its time range. */
export interface HourWalkStep extends WalkStep {
  /** The step's range of the time key: [from, to). */
  from: Date;
  to: Date;
  /** A whole day of `stepsOf` (which the reader may ask to read by its hours instead). */
  day?: true;
  /**
   * Only asks whether the step holds any match (a count of one): the rest of a day whose latest
   * hour held none. Nothing of it is read into the page or the count. MongoDB stops at the first
   * match; FerretDB pushes no limit down and reads every row the step's equalities match, which
   * for the rest of a quiet day is few (a month of them was too many: BENCHMARKS.md, issue 37).
   */
  probe?: true;
}

/** The highest id any list issues sorts below this (ids are ASCII). */
export const AFTER_EVERY_ID = '\u{ffff}';

/** What a walk tells its steps after each one: whether the page is full, how many more it wants. */
export interface WalkFeedback {
  full: boolean;
  /** The documents it still wants to see: the skip and the rest of the page, or the count's rest. */
  want: number;
  /**
   * The matches the step just read held (its count in page mode, its documents otherwise); 0:
   * none. Absent from a caller that reads steps whole (an export).
   */
  found?: number;
  /**
   * The whole-day step just yielded (`day`) holds too much to read in one query (FerretDB decodes
   * and sorts every match of a step): its hours instead.
   */
  hours?: true;
}

/** The steps of one lead value of a walk over `span`, from the instant `at` (included) in reading order. */
export type LeadSteps = (
  step: StepMaker,
  at: number,
  span: { oldest: number; newest: number },
) => Generator<HourWalkStep, void, WalkFeedback | undefined>;

/** A step of `ms` from `start`, selected by `field: key` (and the lead's equality). */
export type StepMaker = (start: number, ms: number, field: string, key: string) => HourWalkStep;

function stepMaker(order: HourWalkOrder, lead: number | undefined, ascending: boolean): StepMaker {
  const leadKeys = lead === undefined ? [] : [lead];
  return (start, ms, field, key) => ({
    where: { ...(lead === undefined ? {} : { [order.lead!.field]: lead }), [field]: key },
    from: new Date(start),
    to: new Date(start + ms),
    past: ascending
      ? { keys: [...leadKeys, new Date(start + ms - 1)], id: AFTER_EVERY_ID }
      : { keys: [...leadKeys, new Date(start)], id: '' },
  });
}

/** The hours of the day the walk starts in, then whole days (or the hours of one that holds many). */
function* stepsOf(
  order: HourWalkOrder,
  ascending: boolean,
  step: StepMaker,
  at: number,
  span: { oldest: number; newest: number },
): Generator<HourWalkStep, void, WalkFeedback | undefined> {
  const dir = ascending ? 1 : -1;
  /**
   * The hours of `day` from the hour of `from` on, within the span; a full page ends them with the
   * rest of the day. With `probe` (the day the walk starts in), the first hour that holds no match
   * is followed by a probe of the rest of the day: when that holds none either, the walk goes on
   * to the next day at once instead of looking up each of its hours (a filter with nothing today
   * cost a lookup an hour since midnight). Not in a day read by its hours because it holds many:
   * there the probe finds matches, and on FerretDB it costs what reading one of its hours does
   * (8 ms in a day of 1,440 against 1-2 for an empty hour).
   */
  function* hoursOf(
    day: number,
    from: number,
    probe: boolean,
  ): Generator<HourWalkStep, void, WalkFeedback | undefined> {
    const firstHour = Math.max(bucketStart(span.oldest, HOUR_MS), day);
    const lastHour = Math.min(bucketStart(span.newest, HOUR_MS), day + DAY_MS - HOUR_MS);
    let probed = !probe;
    for (let h = bucketStart(from, HOUR_MS); h >= firstHour && h <= lastHour; h += dir * HOUR_MS) {
      const feedback = yield step(h, HOUR_MS, order.hour, hourKey(h));
      const [start, end] = ascending ? [h + HOUR_MS, lastHour + HOUR_MS] : [firstHour, h];
      if (feedback?.full) {
        // Asked for coarser steps (only counting from here): the rest of the day in one, by its day key.
        if (start < end) yield step(start, end - start, order.day, dayKey(day));
        return;
      }
      if (probed || feedback?.found !== 0 || start >= end) continue;
      probed = true;
      const rest = yield { ...step(start, end - start, order.day, dayKey(day)), probe: true };
      if (rest?.found === 0) return;
    }
  }
  const day = bucketStart(at, DAY_MS);
  yield* hoursOf(day, at, true);
  const firstDay = bucketStart(span.oldest, DAY_MS);
  const lastDay = bucketStart(span.newest, DAY_MS);
  for (let d = day + dir * DAY_MS; d >= firstDay && d <= lastDay; d += dir * DAY_MS) {
    const feedback = yield { ...step(d, DAY_MS, order.day, dayKey(d)), day: true };
    if (feedback?.hours) yield* hoursOf(d, ascending ? d : d + DAY_MS - HOUR_MS, false);
  }
}

/**
 * The steps of a walk in reading order (`ascending`: oldest first) over `span` (epoch ms, both
 * ends included), from its start or from a seek's position `from` (its values in the order's
 * keys: the lead first when there is one, then the time, the id last).
 */
export function* hourWalk(
  order: HourWalkOrder,
  ascending: boolean,
  span: { oldest: number; newest: number },
  from?: readonly CursorKeyValue[],
  leadSteps: LeadSteps = (step, at, s) => stepsOf(order, ascending, step, at, s),
): Generator<HourWalkStep, void, WalkFeedback | undefined> {
  // The bounds are known to the hour (they are widened once an hour per process).
  span = {
    oldest: bucketStart(span.oldest, HOUR_MS),
    newest: bucketStart(span.newest, HOUR_MS) + HOUR_MS - 1,
  };
  if (span.oldest > span.newest) return;
  const leads: (number | undefined)[] = order.lead
    ? ascending
      ? [...order.lead.values]
      : [...order.lead.values].reverse()
    : [undefined];
  const fromLead = order.lead && from ? (from[0] as number) : undefined;
  let fromTime: number | undefined;
  if (from) {
    fromTime = (from[order.lead ? 1 : 0] as Date).getTime();
    // A position a step ended on (`past`) stands strictly outside that step.
    const id = from.at(-1);
    if (!ascending && id === '') fromTime -= 1;
    if (ascending && id === AFTER_EVERY_ID) fromTime += 1;
  }
  for (const lead of leads) {
    if (fromLead !== undefined && lead !== undefined && (ascending ? lead < fromLead : lead > fromLead))
      continue;
    let at = fromTime !== undefined && lead === fromLead ? fromTime : ascending ? span.oldest : span.newest;
    if (ascending ? at > span.newest : at < span.oldest) continue;
    at = Math.min(Math.max(at, span.oldest), span.newest);
    yield* leadSteps(stepMaker(order, lead, ascending), at, span);
  }
}

/** How a walk reads one step: the step's matches in list order (a window of them), their count. */
export interface HourWalkReads<D, S extends WalkStep = HourWalkStep> {
  find(step: S, skip: number, limit: number): Promise<D[]>;
  /** The step's matches, counted up to `limit` (the store stops there). */
  count(step: S, limit: number): Promise<number>;
}

/** What a walk found: the page's documents, the count (page mode), where it stopped early. */
export interface HourWalkResult<D> {
  docs: D[];
  total: number;
  /** Set when the step budget ran out before the list's end: the position to resume from. */
  stoppedAt?: WalkStep['past'];
  /** Set when the count stopped at its own bound (`LIST_COUNT_STEPS_PAST_PAGE`): `total` is a lower bound. */
  countStopped?: true;
}

/**
 * What bounds one call's walk: at most `maxSteps` steps, none started after `until` (epoch ms),
 * and a step that fails with an error `stopsAt` accepts (its time limit) ends the walk before it,
 * unless it is the first.
 */
export interface HourWalkBudget {
  maxSteps: number;
  until?: number;
  stopsAt?: (err: unknown) => boolean;
}

/**
 * A whole day (`HourWalkStep.day`) holding at least this many matches is read by its hours while
 * the page fills: FerretDB decodes and sorts every match of a step to return the page's few (a
 * day of 1,440 requests took 390 ms for 19 of them, an hour 22 ms). Counted first (up to this,
 * the store stopping there): a day with fewer is read in one query and that count is its count.
 */
const DENSE_STEP = 200;

/**
 * Reads `steps` in order until `limit` documents (after `skip` of them) are found and, when
 * `count` (page mode), `LIST_COUNT_LIMIT` are counted or `LIST_COUNT_STEPS_PAST_PAGE` steps were
 * counted past the page (`countStepsPastPage`: another bound, for a caller whose total must be
 * exact up to the cap, such as SCIM's `totalResults`), or the steps end, or the budget is spent.
 * With `knownTotal` (a count of
 * the same list made a moment ago: `createListTotals`) page mode counts only the steps the skip
 * passes over and stops once the page is full; the total is that.
 */
export async function walkHours<D, S extends WalkStep & { day?: true; probe?: true } = HourWalkStep>(
  steps: Generator<S, void, WalkFeedback | undefined>,
  window: { skip: number; limit: number; count: boolean; knownTotal?: number; countStepsPastPage?: number },
  reads: HourWalkReads<D, S>,
  budget: HourWalkBudget,
): Promise<HourWalkResult<D>> {
  const docs: D[] = [];
  let skip = window.skip;
  let total = 0;
  let read = 0;
  let countedPastPage = 0;
  let previous: S | undefined;
  let hours = false;
  /** The matches the last step held (`WalkFeedback.found`). */
  let found = 0;
  // Once the page is full only the count goes on: the walk is then asked for coarser steps.
  for (let next = steps.next(); !next.done; next = steps.next(feedback())) {
    const step = next.value;
    hours = false;
    const full = docs.length >= window.limit;
    // Past a full page the count reads a bounded span (each step's count stops at the matches
    // still needed for the cap): at most LIST_COUNT_LIMIT decoded and a few lookups a call.
    if (full && countedPastPage === (window.countStepsPastPage ?? LIST_COUNT_STEPS_PAST_PAGE))
      return { docs, total: totalFound(), countStopped: true };
    const spent =
      read === budget.maxSteps || (read > 0 && budget.until !== undefined && Date.now() >= budget.until);
    if (spent) return { docs, total: totalFound(), stoppedAt: previous!.past };
    read++;
    if (full) countedPastPage++;
    let done: boolean | 'hours' | 'unread';
    try {
      done = await readStep(step);
    } catch (err) {
      if (!previous || !budget.stopsAt?.(err)) throw err;
      return { docs, total: totalFound(), stoppedAt: previous.past };
    }
    if (done === 'hours' || done === 'unread') {
      hours = done === 'hours';
      continue;
    }
    previous = step;
    if (done) break;
  }
  return { docs, total: totalFound() };

  /** What the next step should hold (`WalkFeedback`): the skip and the page's rest, then the count's. */
  function feedback(): WalkFeedback {
    const full = docs.length >= window.limit;
    const dense = hours ? { hours: true as const } : {};
    if (!full) return { full, want: skip + window.limit - docs.length, found, ...dense };
    const counting = window.count && window.knownTotal === undefined;
    return { full, want: counting ? Math.max(0, LIST_COUNT_LIMIT - total) : 0, found, ...dense };
  }

  /** The count: the known one, or what the steps read counted. */
  function totalFound() {
    return window.knownTotal ?? total;
  }

  /**
   * Reads one step into `docs` (and `total`); whether the walk is done, `hours` to read the day by
   * them, or `unread` (a probe that found matches: the steps that follow read them).
   */
  async function readStep(step: S): Promise<boolean | 'hours' | 'unread'> {
    if (step.probe) {
      found = await reads.count(step, 1);
      // Passed over only when it holds nothing (a later call then resumes after it); else its hours follow.
      return found === 0 ? false : 'unread';
    }
    const need = window.limit - docs.length;
    // A day while the page fills: its hours when it holds many (its count, up to DENSE_STEP, says).
    let known: number | undefined;
    if (step.day && need > 0) {
      found = known = await reads.count(step, DENSE_STEP);
      if (known >= DENSE_STEP) return 'hours';
    }
    if (!window.count) {
      const page = known === 0 ? [] : await reads.find(step, 0, need);
      docs.push(...page);
      found = page.length;
      return docs.length >= window.limit;
    }
    // Page mode: the step's count says whether the skip passes over it. At skip 0 the find goes
    // first: fewer than it asked for are all the step holds, and no count is needed (nor when the
    // total is known: nothing is skipped, so the step's count serves nothing).
    // Up to the cap, and past the skip (a page beyond the cap still finds its place).
    const countRest = () => reads.count(step, Math.max(LIST_COUNT_LIMIT - total, skip + 1));
    let n: number;
    if (need > 0 && skip === 0) {
      const page = known === 0 ? [] : await reads.find(step, 0, need);
      docs.push(...page);
      n =
        page.length < need || window.knownTotal !== undefined ? page.length : (known ?? (await countRest()));
    } else {
      n = known ?? (await countRest());
      if (need > 0 && n > skip) docs.push(...(await reads.find(step, skip, need)));
    }
    skip = Math.max(0, skip - n);
    total += n;
    found = n;
    return docs.length >= window.limit && (window.knownTotal !== undefined || total >= LIST_COUNT_LIMIT);
  }
}

/**
 * A range condition on one field narrowed to [from, to): the list's own range on it (if any)
 * and the step's, as one operator object (MongoDB and FerretDB both read it as their bounds).
 */
export function rangeWithin(
  range: { $gte?: Date; $lt?: Date } | undefined,
  from: Date,
  to: Date,
): { $gte: Date; $lt: Date } {
  return {
    $gte: range?.$gte && range.$gte > from ? range.$gte : from,
    $lt: range?.$lt && range.$lt < to ? range.$lt : to,
  };
}
