import { createHash } from 'node:crypto';
import { AppError } from './errors.js';

/**
 * Entity tags for single reads, and `If-Match` preconditions for the writes that follow them.
 *
 * A tag is strong and reads `"<revision>-<fingerprint>"`:
 * - the revision is the aggregate's `rev`, bumped by every write to it (the compare-and-set token
 *   of `updateAggregate`);
 * - the fingerprint is a hash of the representation as this caller was sent it, so it also changes
 *   when something shown but stored elsewhere changes (an assignee's name, an SLA status turning
 *   `at_risk` with time, a group's member count). `If-None-Match` compares whole tags: a 304 means
 *   the very bytes the client holds, but for a value that counts with time alone (a running SLA
 *   clock's `remainingSeconds`, which follows from its `breachAt`): a view may leave such a value
 *   out of its fingerprint (`withRevision`'s basis), or no tag would outlive a second.
 *
 * `If-Match` guards the resource's own state: it holds when the aggregate is still at the tag's
 * revision. A renamed assignee changes what a read shows of a request, not the request, so it
 * does not fail a write to the request. The check runs inside the write's read-decide-write, so
 * a concurrent writer between the check and the write makes the compare-and-set miss, the
 * decision is taken again on the new revision, and the precondition fails (412) as it should.
 */

const TAG = /^"(\d+)-[A-Za-z0-9_-]+"$/;
/** What a tag's fingerprint covers when not the whole representation (`withRevision`). */
const TAG_BASIS = Symbol('tagBasis');

const tagBasisOf = (representation: unknown): unknown =>
  (typeof representation === 'object' && representation !== null
    ? (representation as Record<symbol, unknown>)[TAG_BASIS]
    : undefined) ?? representation;

/**
 * The tag of one representation of an aggregate at `revision`: its fingerprint covers the
 * representation, or the basis `withRevision` gave it (all of it but what counts with time).
 */
export function entityTag(revision: number, representation: unknown): string {
  const fingerprint = createHash('sha256')
    .update(JSON.stringify(tagBasisOf(representation)))
    .digest('base64url')
    .slice(0, 16);
  return `"${revision}-${fingerprint}"`;
}

const listOf = (header: string | string[] | undefined): string[] =>
  (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);

/** `If-None-Match` (weak comparison, RFC 9110 §13.1.2): does the client already hold `tag`? */
export function holdsCurrent(ifNoneMatch: string | string[] | undefined, tag: string): boolean {
  return listOf(ifNoneMatch).some((given) => given === '*' || given.replace(/^W\//, '') === tag);
}

/**
 * What an `If-Match` header asks: the revisions its tags name, and the tags that can never match
 * (weak ones, and tags this API never gave). Undefined: no precondition (no header, or `*`: any
 * current revision).
 */
export interface IfMatch {
  revisions: readonly number[];
  weak: readonly string[];
  foreign: readonly string[];
}

/**
 * Reads `If-Match`. Strong comparison (RFC 9110 §13.1.1): a weak tag matches nothing, nor does a
 * malformed one, so such a write is refused (412) rather than made blind, with a message that
 * says why.
 */
export function ifMatchRevisions(ifMatch: string | string[] | undefined): IfMatch | undefined {
  const tags = listOf(ifMatch);
  if (tags.length === 0 || tags.includes('*')) return undefined;
  const condition = { revisions: [] as number[], weak: [] as string[], foreign: [] as string[] };
  for (const tag of tags) {
    const match = TAG.exec(tag);
    if (match) condition.revisions.push(Number(match[1]));
    else if (tag.startsWith('W/')) condition.weak.push(tag);
    else condition.foreign.push(tag);
  }
  return condition;
}

/** At most this much of a client's tag is repeated in a message. */
const QUOTED_TAG_MAX = 80;

/** Refuses (412) a write to an aggregate that is not at a revision the client's `If-Match` names. */
export function requireRevision(
  current: { rev?: number },
  condition: IfMatch | undefined,
  what: string,
): void {
  if (condition === undefined || condition.revisions.includes(current.rev ?? 0)) return;
  const resource = what.toLowerCase();
  if (condition.revisions.length === 0 && condition.weak.length > 0) {
    throw new AppError(
      'PRECONDITION_FAILED',
      `If-Match compares entity tags strongly (RFC 9110 §13.1.1), so a weak tag (${condition.weak[0].slice(0, QUOTED_TAG_MAX)}) never matches; send the ${resource}'s ETag exactly as a read (GET) gave it, without W/`,
    );
  }
  if (condition.revisions.length === 0) {
    throw new AppError(
      'PRECONDITION_FAILED',
      `If-Match names no ETag this API gives (${condition.foreign[0].slice(0, QUOTED_TAG_MAX)}); send the ${resource}'s ETag exactly as a read (GET) gave it`,
    );
  }
  throw new AppError(
    'PRECONDITION_FAILED',
    `The ${resource} has changed since the version your If-Match names; read it again (GET) for its current ETag and retry`,
  );
}

/** The revision an aggregate is at once `updateAggregate` made the write decided on `before` (each write bumps it). */
export const revisionAfter = (before: { rev?: number }, wrote: boolean): number =>
  (before.rev ?? 0) + (wrote ? 1 : 0);

const ENTITY_TAG = Symbol('entityTag');

/**
 * Marks a write's answer with the ETag a single read of the resource now gives: the tag of
 * `representation` (the single read's view of the aggregate as written) at `revision`, so the
 * client can make its next conditional write without reading first (see contractRoute).
 */
export function withEntityTag<T extends object>(answer: T, revision: number, representation: unknown): T {
  Object.defineProperty(answer, ENTITY_TAG, {
    value: entityTag(revision, representation),
    enumerable: false,
  });
  return answer;
}

export function entityTagOf(answer: unknown): string | undefined {
  return typeof answer === 'object' && answer !== null
    ? (answer as Record<symbol, string | undefined>)[ENTITY_TAG]
    : undefined;
}

const REVISION = Symbol('revision');

/**
 * Marks a single read's result with the aggregate's revision, for its ETag (see contractRoute).
 * `basis`, when given: what the tag's fingerprint covers instead of the whole view, the view
 * without a value that changes with the passage of time alone (an SLA clock's countdown), so a
 * client holding it still gets 304 a second later. Such a value must follow from what the basis
 * keeps (the countdown from its `breachAt`), and a change it stands for (an SLA status turning
 * `at_risk`) must show in the basis too.
 */
export function withRevision<T extends object>(view: T, revision: number | undefined, basis?: object): T {
  Object.defineProperty(view, REVISION, { value: revision ?? 0, enumerable: false });
  if (basis) Object.defineProperty(view, TAG_BASIS, { value: basis, enumerable: false });
  return view;
}

export function revisionOf(view: unknown): number | undefined {
  return typeof view === 'object' && view !== null
    ? ((view as Record<symbol, number | undefined>)[REVISION] ?? undefined)
    : undefined;
}
