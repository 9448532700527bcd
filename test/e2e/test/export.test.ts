// GET /v1/events/export through the gateway (issue 17): the audit log as NDJSON over a real stack,
// streamed (chunked), in the list's shape plus a resume cursor, internal notes without content,
// resumable, negotiated (406), admin only, counted in the events bucket.
import { EventExportEnd, EventExportLine, EventListItem } from '@support-desk/contracts';
import t from 'tap';
import { cast } from '../src/actors.js';
import { expectError, expectOk, expectShape } from '../src/expect.js';
import type { HttpResponse, Json } from '../src/http.js';
import { eventually, startStack } from '../src/stack.js';
import { createRequest } from '../src/world.js';

const stack = await startStack(t);
const { admin, agent } = await cast(stack);
const NDJSON = { accept: 'application/x-ndjson' };

const lines = (res: HttpResponse): Json[] =>
  res.text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

// One request with a status change, a public comment and an internal note; its five events.
let request: Json;
let listed: Json[] = [];
t.test('a request with a public comment and an internal note', async (t) => {
  request = await createRequest(t, agent.api);
  const at = `/v1/requests/${request.id}`;
  expectOk(t, await agent.api.patch(at, { status: 'in_progress' }), 200, 'status');
  expectOk(t, await agent.api.post(`${at}/comments`, { content: 'on it' }), 201, 'public');
  expectOk(
    t,
    await agent.api.post(`${at}/comments`, { content: 'secret plan', isInternal: true }),
    201,
    'internal note',
  );
  expectOk(t, await agent.api.patch(at, { priority: 'high' }), 200, 'priority');
  listed = await eventually(
    async () => {
      const res = await admin.api.get(`/v1/events?resourceId=${request.id}&limit=100`);
      return res.json?.data?.events?.length === 5 ? (res.json.data.events as Json[]) : undefined;
    },
    { what: "the request's 5 events in the audit log" },
  );
});

t.test('the export through the gateway: NDJSON, streamed, the list items plus cursors', async (t) => {
  const res = await admin.api.get(`/v1/events/export?resourceId=${request.id}`, { headers: NDJSON });
  t.equal(res.status, 200);
  t.match(String(res.headers['content-type']), /^application\/x-ndjson/);
  t.equal(res.headers['transfer-encoding'], 'chunked', 'streamed through the gateway');
  t.ok(res.headers['x-ratelimit-limit'], 'counted in a bucket (rate-limit headers)');
  const all = lines(res);
  const events = all.slice(0, -1);
  t.equal(events.length, 5);
  for (const line of events) expectShape(t, EventExportLine, line, line.type);
  expectShape(t, EventExportEnd, all.at(-1), 'end line');
  t.same(all.at(-1), { type: 'end', count: 5, nextCursor: events[4].cursor, hasMore: false });
  t.same(
    events.map(({ cursor: _c, ...item }: Json) => item),
    [...listed].reverse(),
    'oldest first, each exactly as GET /v1/events shows it',
  );
  for (const item of listed) expectShape(t, EventListItem, item, 'list item');
  const comments = events.filter((e: Json) => e.type === 'request.comment_added');
  t.equal(comments.length, 2);
  const [pub, internal] = comments.map((e: Json) => e.changes?.comment?.to);
  t.equal(pub?.content, 'on it', 'a public comment is exported with its content');
  t.equal(internal?.isInternal, true);
  t.notOk('content' in (internal ?? {}), 'an internal note never carries its content');
  t.notOk(res.text.includes('secret plan'), 'not anywhere in the export');
});

t.test('resume after any line; slices with limit', async (t) => {
  const whole = lines(
    await admin.api.get(`/v1/events/export?resourceId=${request.id}`, { headers: NDJSON }),
  ).slice(0, -1);
  const rest = lines(
    await admin.api.get(`/v1/events/export?resourceId=${request.id}&cursor=${whole[1].cursor}`, {
      headers: NDJSON,
    }),
  );
  t.same(
    rest.slice(0, -1).map((e: Json) => e.id),
    whole.slice(2).map((e: Json) => e.id),
    'the events after the second',
  );
  const head = lines(
    await admin.api.get(`/v1/events/export?resourceId=${request.id}&limit=2`, { headers: NDJSON }),
  );
  t.same(head.at(-1), { type: 'end', count: 2, nextCursor: whole[1].cursor, hasMore: true });
});

t.test('the whole log of the stack streams to its end line', async (t) => {
  const res = await admin.api.get('/v1/events/export', { headers: NDJSON, timeoutMs: 60_000 });
  t.equal(res.status, 200);
  const all = lines(res);
  const end = all.at(-1);
  t.equal(end?.type, 'end', 'complete: the end line is there');
  t.equal(end?.count, all.length - 1);
  t.ok(end.count >= 5);
  t.equal(new Set(all.slice(0, -1).map((e: Json) => e.id)).size, end.count, 'no event twice');
});

t.test('errors before the first line are the envelope', async (t) => {
  const json = await admin.api.get(`/v1/events/export?resourceId=${request.id}`);
  expectError(t, json, 406, 'NOT_ACCEPTABLE', 'Accept: application/json only');
  t.equal(json.json?.error?.requestId, json.headers['x-request-id'], 'with the request id');
  expectError(
    t,
    await admin.api.get('/v1/events/export?cursor=nonsense', { headers: NDJSON }),
    400,
    'VALIDATION_ERROR',
    'a bad cursor',
  );
  expectError(t, await agent.api.get('/v1/events/export', { headers: NDJSON }), 403, 'FORBIDDEN', 'an agent');
  expectError(t, await stack.api(null).get('/v1/events/export'), 401, 'UNAUTHORIZED', 'no credential');
});
