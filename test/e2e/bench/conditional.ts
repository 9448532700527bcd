/**
 * The stack bench's conditional calls: what `Idempotency-Key` costs a create and what entity tags
 * cost (or save) a read and an update, each measured against the plain call of the same run.
 *
 * - A create with a fresh `Idempotency-Key` per call: the gateway claims the key in Redis before
 *   the call and stores the first answer for 24 h after it.
 * - A read with `If-None-Match` naming the current tag: the service still reads and tags the
 *   request, and answers 304 with no body.
 * - An update with `If-Match` naming the current revision: the precondition is checked inside the
 *   write's read-decide-write. The bench tracks each request's revision (its tag's number, plus one
 *   per update it made) so the precondition holds; a 412 would show in the run's statuses.
 */
import { randomUUID } from 'node:crypto';
import type { Api } from '../src/http.js';
import type { CallShape } from './load.js';

const TAG_CONCURRENCY = 8;
const REVISION = /^"(\d+)-/;

/** Each request's current ETag, read once (GET) before the conditional runs. */
export async function currentTags(api: Api, ids: readonly string[]): Promise<Map<string, string>> {
  const tags = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      const res = await api.get(`/v1/requests/${id}`);
      const tag = res.headers.etag;
      if (res.status !== 200 || typeof tag !== 'string')
        throw new Error(`tags: GET /v1/requests/${id} ${res.status} without an ETag`);
      tags.set(id, tag);
    }
  };
  await Promise.all(Array.from({ length: TAG_CONCURRENCY }, worker));
  return tags;
}

/** Creates, each with a fresh `Idempotency-Key`. */
export function createWithKey(createBody: () => string): CallShape {
  return {
    method: 'POST',
    next: () => ({ path: '/v1/requests', body: createBody(), headers: { 'idempotency-key': randomUUID() } }),
  };
}

/** Reads naming the tag the client holds: 304 while the request is unchanged. */
export function readIfNoneMatch(tags: ReadonlyMap<string, string>, pick: () => string): CallShape {
  return {
    method: 'GET',
    next: () => {
      const id = pick();
      return { path: `/v1/requests/${id}`, headers: { 'if-none-match': tags.get(id) ?? '*' } };
    },
  };
}

/** Updates naming the revision they were made on (tracked per request across the run). */
export function updateIfMatch(tags: ReadonlyMap<string, string>, pick: () => string): CallShape {
  const revisions = new Map([...tags].map(([id, tag]) => [id, Number(REVISION.exec(tag)?.[1])]));
  let n = 0;
  return {
    method: 'PATCH',
    next: (context) => {
      const id = pick();
      context.id = id;
      return {
        path: `/v1/requests/${id}`,
        body: JSON.stringify({ title: `Bench conditional update ${n++}` }),
        // Only the revision of an If-Match tag is compared; the fingerprint may be any.
        headers: { 'if-match': `"${revisions.get(id)}-bench"` },
      };
    },
    onResponse: (status, _headers, context) => {
      const id = context.id as string;
      if (status === 200) revisions.set(id, (revisions.get(id) ?? 0) + 1);
    },
  };
}
