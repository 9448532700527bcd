import type { CursorKeyValue } from './cursor.js';
import type { WalkFeedback, WalkStep } from './hour-walk.js';

/**
 * Lists sorted by a string (a name, an email) read one initial at a time (issue 31), as the
 * time-sorted lists read an hour or a day at a time (`hourWalk`): FerretDB on PostgreSQL pushes
 * down only top-level scalar equalities and never a sort, so a list sorted by name in one query
 * decodes and sorts every document its equalities match. Each document keeps the rank of its sort
 * key's first character (`initialRank`, a number), which orders the documents like the key itself
 * (code points: every key of rank r sorts before every key of rank r + 1), and the walk reads the
 * ranks in turn, the rank's equality beside the filter's (a GIN lookup on PostgreSQL; on MongoDB
 * the key's range of the rank, from its usual index), sorting only that rank's matches. There are
 * `INITIAL_RANKS` of them, fewer than a call's step budget, so a walk always reaches its end; an
 * empty rank costs one index lookup.
 */

/** Below `!` (a space, a control character, the empty string); `!` to `~` each; anything past `~`. */
export const INITIAL_RANKS = 96;

/** The rank of a sort key's first UTF-16 unit: 0 below `!`, 1 (`!`) to 94 (`~`), 95 past `~`. */
export function initialRank(key: string): number {
  const unit = key.charCodeAt(0);
  if (!(unit > 0x20)) return 0;
  return unit >= 0x7f ? INITIAL_RANKS - 1 : unit - 0x20;
}

/** The lowest key of a rank (every key of the rank sorts at or after it; ranks past the last: U+FFFF). */
const lowestOf = (rank: number): string =>
  rank <= 0 ? '' : rank >= INITIAL_RANKS ? '\u{ffff}' : String.fromCharCode(rank + 0x20);

/** One rank of the walk: its equality and where it ends. */
export interface InitialWalkStep extends WalkStep {
  rank: number;
  /** The rank's range of the sort key: [from, to) (`to` undefined past the last rank). */
  from: string;
  to?: string;
}

/**
 * The ranks of `field` in reading order (`ascending`), from the first or from a seek's position
 * `from` (its values in the order's keys: the sort key, then the id). A position a step ended on
 * (`past`, id '') stands strictly outside it.
 */
export function* initialWalk(
  field: string,
  ascending: boolean,
  from?: readonly CursorKeyValue[],
): Generator<InitialWalkStep, void, WalkFeedback | undefined> {
  let rank = ascending ? 0 : INITIAL_RANKS - 1;
  if (from) {
    rank = initialRank(String(from[0]));
    // Descending, the position past rank r is r's lowest key with the empty id: rank r is done.
    if (!ascending && from.at(-1) === '') rank -= 1;
  }
  for (; rank >= 0 && rank < INITIAL_RANKS; rank += ascending ? 1 : -1) {
    const to = rank + 1 < INITIAL_RANKS ? lowestOf(rank + 1) : undefined;
    yield {
      rank,
      where: { [field]: rank },
      from: lowestOf(rank),
      ...(to === undefined ? {} : { to }),
      past: { keys: [ascending ? lowestOf(rank + 1) : lowestOf(rank)], id: '' },
    };
  }
}
