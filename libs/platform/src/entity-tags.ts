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
 *   the very bytes the client holds.
 *
 * `If-Match` guards the resource's own state: it holds when the aggregate is still at the tag's
 * revision. A renamed assignee changes what a read shows of a request, not the request, so it
 * does not fail a write to the request. The check runs inside the write's read-decide-write, so
 * a concurrent writer between the check and the write makes the compare-and-set miss, the
 * decision is taken again on the new revision, and the precondition fails (412) as it should.
 */

const TAG = /^"(\d+)-[A-Za-z0-9_-]+"$/;

/** The tag of one representation of an aggregate at `revision`. */
export function entityTag(revision: number, representation: unknown): string {
  const fingerprint = createHash('sha256')
    .update(JSON.stringify(representation))
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
 * The revisions an `If-Match` header accepts: undefined when there is no precondition (no header,
 * or `*`: any current revision). Strong comparison: a weak or malformed tag matches nothing, so
 * the write is refused rather than made blind.
 */
export function ifMatchRevisions(ifMatch: string | string[] | undefined): number[] | undefined {
  const tags = listOf(ifMatch);
  if (tags.length === 0 || tags.includes('*')) return undefined;
  return tags.flatMap((tag) => {
    const match = TAG.exec(tag);
    return match ? [Number(match[1])] : [];
  });
}

/** Refuses (412) a write to an aggregate that is no longer at a revision the client named. */
export function requireRevision(
  current: { rev?: number },
  revisions: readonly number[] | undefined,
  what: string,
): void {
  if (revisions === undefined || revisions.includes(current.rev ?? 0)) return;
  throw new AppError(
    'PRECONDITION_FAILED',
    `The ${what.toLowerCase()} has changed since the version your If-Match names; read it again (GET) for its current ETag and retry`,
  );
}

const REVISION = Symbol('revision');

/** Marks a single read's result with the aggregate's revision, for its ETag (see contractRoute). */
export function withRevision<T extends object>(view: T, revision: number | undefined): T {
  Object.defineProperty(view, REVISION, { value: revision ?? 0, enumerable: false });
  return view;
}

export function revisionOf(view: unknown): number | undefined {
  return typeof view === 'object' && view !== null
    ? ((view as Record<symbol, number | undefined>)[REVISION] ?? undefined)
    : undefined;
}
