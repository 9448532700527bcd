// Support requests through the gateway: list vs single shapes, page/limit, every filter, the spec's
// state examples, comments (internal notes), attachments (byte-identical download), delete; the
// real curl's own uploads (Expect: 100-continue) up to the attachment limit.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CreatedRequest,
  RequestAttachment,
  RequestComment,
  RequestDetail,
  RequestListItem,
  UpdatedRequest,
  UploadedAttachment,
} from '@support-desk/contracts';
import t from 'tap';
import { cast } from '../src/actors.js';
import { expectError, expectKeys, expectOk, expectShape, ISO_DATE } from '../src/expect.js';
import { ABSENT } from '../src/fixtures.js';
import { type Json, qs } from '../src/http.js';
import { Ledger } from '../src/ledger.js';
import { eventually, sleep, startStack } from '../src/stack.js';
import { createGroup, createRequest } from '../src/world.js';

/** The attachment limit as shipped (the services' default), so an upload at the limit is proven. */
const ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024;
const stack = await startStack(t);
const { admin, agent, viewer } = await cast(stack);
const ledger = new Ledger();
const run = promisify(execFile);

const LIST_FIELDS = [
  'id',
  'title',
  'description',
  'status',
  'priority',
  'category',
  'createdAt',
  'updatedAt',
  'assignedTo',
  'assignedGroup',
  'requester',
];

/** Events of one request through GET /v1/requests/:id/events, polled until `until` holds. */
async function requestEvents(id: string, until: (events: Json[]) => boolean, what: string): Promise<Json[]> {
  let last: Json[] = [];
  try {
    return await eventually(
      async () => {
        const res = await admin.api.get(`/v1/requests/${id}/events`);
        last = res.json?.data?.events ?? [];
        return until(last) ? last : null;
      },
      { what },
    );
  } catch {
    return last;
  }
}

t.test('create → open; list item vs single read, field by field', async (t) => {
  const group = await createGroup(t, admin.api);
  const res = await agent.api.post('/v1/requests', {
    title: 'VPN drops every hour',
    description: 'Since Monday the VPN disconnects hourly.',
    priority: 'high',
    category: 'network',
    tags: ['vpn', 'network'],
    assignedGroup: group.id,
  });
  const created = expectOk(t, res, 201, 'POST /v1/requests');
  expectShape(t, CreatedRequest, created, 'create response');
  expectKeys(
    t,
    created,
    ['id', 'title', 'status', 'createdAt'],
    'create response (spec: id, title, status, createdAt)',
  );
  t.equal(created.status, 'open', 'a new request is open');
  t.match(created.id, /^req_/, 'id prefix req_');
  t.match(created.createdAt, ISO_DATE, 'createdAt ISO 8601 UTC');
  ledger.record(created.id, 'request.created');
  ledger.allow(created.id, 'request.assigned'); // created with a group

  const list = expectOk(t, await agent.api.get('/v1/requests'), 200, 'GET /v1/requests');
  const item = list?.requests?.find((r: Json) => r.id === created.id);
  t.ok(item, 'the new request is listed');
  if (item) {
    expectShape(t, RequestListItem, item, 'list item');
    expectKeys(t, item, LIST_FIELDS, 'list item columns (no tags, sla, comments, attachments)');
    t.equal(item.assignedTo, null, 'list: assignedTo is an id or null');
    t.equal(item.assignedGroup, group.id, 'list: assignedGroup is the group id');
    t.same(
      item.requester,
      { id: agent.id, email: agent.email, name: agent.name },
      'list: requester {id, email, name}',
    );
  }
  const single = expectOk(t, await agent.api.get(`/v1/requests/${created.id}`), 200, 'GET /v1/requests/:id');
  expectShape(t, RequestDetail, single, 'single read');
  for (const f of [...LIST_FIELDS, 'tags', 'sla', 'comments', 'attachments'])
    t.ok(f in (single ?? {}), `single read has ${f}`);
  t.same(single?.assignedGroup, { id: group.id, name: group.name }, 'single: assignedGroup {id, name}');
  t.same(
    single?.requester,
    { id: agent.id, email: agent.email, name: agent.name, isVip: false },
    'single: requester adds isVip',
  );
  t.same([...(single?.tags ?? [])].sort(), ['network', 'vpn'], 'single: tags');
  t.equal(single?.category, 'network', 'category');
  t.equal(single?.priority, 'high', 'priority');
  for (const f of ['tier', 'responseTarget', 'resolutionTarget', 'responseStatus', 'resolutionStatus']) {
    t.ok(single?.sla && f in single.sla, `sla.${f}`);
  }
  t.match(single?.sla?.responseTarget, ISO_DATE, 'sla.responseTarget is a datetime');
  t.same(single?.comments, [], 'no comments yet');
  t.same(single?.attachments, [], 'no attachments yet');
});

t.test("the spec's state examples", async (t) => {
  const req = await createRequest(t, agent.api, { priority: 'medium' }, ledger);
  t.equal(req.status, 'open', 'create → open');
  const before = expectOk(t, await agent.api.get(`/v1/requests/${req.id}`), 200, 'read');

  // open → in_progress, recorded as request.status_changed with changes.status {from, to}
  await sleep(5);
  const toProgress = expectOk(
    t,
    await agent.api.patch(`/v1/requests/${req.id}`, { status: 'in_progress' }),
    200,
    'PATCH status in_progress',
  );
  expectShape(t, UpdatedRequest, toProgress, 'PATCH response');
  expectKeys(t, toProgress, ['id', 'status', 'updatedAt'], 'PATCH response (spec: id, status, updatedAt)');
  t.equal(toProgress?.status, 'in_progress', 'now in_progress');
  ledger.record(req.id, 'request.status_changed');
  const events = await requestEvents(
    req.id,
    (es) => es.some((e) => e.type === 'request.status_changed'),
    'status_changed event',
  );
  const changed = events.find((e) => e.type === 'request.status_changed');
  t.ok(changed, 'request.status_changed recorded');
  t.same(
    changed?.changes?.status,
    { from: 'open', to: 'in_progress' },
    'changes.status {from: open, to: in_progress}',
  );

  // in_progress → resolved with resolution; updatedAt changes
  await sleep(5);
  const resolved = expectOk(
    t,
    await agent.api.patch(`/v1/requests/${req.id}`, {
      status: 'resolved',
      resolution: 'Replaced the toner.',
    }),
    200,
    'PATCH status resolved + resolution',
  );
  t.equal(resolved?.status, 'resolved', 'now resolved');
  ledger.record(req.id, 'request.status_changed');
  t.ok(
    Date.parse(resolved?.updatedAt) > Date.parse(toProgress?.updatedAt),
    'updatedAt changes (in_progress → resolved)',
  );
  t.ok(
    Date.parse(toProgress?.updatedAt) > Date.parse(before?.updatedAt),
    'updatedAt changes (open → in_progress)',
  );
  const after = expectOk(t, await agent.api.get(`/v1/requests/${req.id}`), 200, 'read after resolve');
  t.equal(after?.status, 'resolved', 'single read: resolved');
  t.equal(after?.resolution, 'Replaced the toner.', 'single read: resolution kept');
  t.equal(after?.updatedAt, resolved?.updatedAt, 'single read updatedAt = PATCH updatedAt');
  const all = await requestEvents(
    req.id,
    (es) => es.filter((e) => e.type === 'request.status_changed').length >= 2,
    'second status change',
  );
  const second = all.filter((e) => e.type === 'request.status_changed')[1];
  t.same(
    second?.changes?.status,
    { from: 'in_progress', to: 'resolved' },
    'changes.status {from: in_progress, to: resolved}',
  );

  // first assignment: changes.assignedTo {from: null, to: user id}
  const fresh = await createRequest(t, agent.api, {}, ledger);
  const assigned = expectOk(
    t,
    await agent.api.patch(`/v1/requests/${fresh.id}`, { assignedTo: agent.id }),
    200,
    'PATCH assignedTo',
  );
  t.ok(assigned, 'assigned');
  ledger.record(fresh.id, 'request.assigned');
  ledger.allow(fresh.id, 'request.status_changed'); // open → assigned is the product's choice
  const evs = await requestEvents(
    fresh.id,
    (es) => es.some((e) => e.changes?.assignedTo),
    'assignment event',
  );
  const assignment = evs.find((e) => e.changes?.assignedTo);
  t.equal(assignment?.type, 'request.assigned', 'the assignment is a request.assigned event');
  t.same(
    assignment?.changes?.assignedTo,
    { from: null, to: agent.id },
    'changes.assignedTo {from: null, to: user id}',
  );
  const detail = expectOk(t, await agent.api.get(`/v1/requests/${fresh.id}`), 200, 'read assigned');
  t.same(
    detail?.assignedTo,
    { id: agent.id, email: agent.email, name: agent.name },
    'single: assignedTo {id, email, name}',
  );
  for (const e of evs) {
    t.ok(
      ['id', 'type', 'timestamp', 'actor'].every((f) => f in e),
      `per-request event ${e.type} has id, type, timestamp, actor`,
    );
  }

  // priority change and a plain update
  expectOk(
    t,
    await agent.api.patch(`/v1/requests/${fresh.id}`, { priority: 'critical' }),
    200,
    'PATCH priority',
  );
  ledger.record(fresh.id, 'request.priority_changed');
  expectOk(
    t,
    await agent.api.patch(`/v1/requests/${fresh.id}`, { title: 'Renamed', tags: ['x'] }),
    200,
    'PATCH title + tags',
  );
  ledger.record(fresh.id, 'request.updated');
  const pr = await requestEvents(
    fresh.id,
    (es) => es.some((e) => e.type === 'request.priority_changed'),
    'priority event',
  );
  t.same(
    pr.find((e) => e.type === 'request.priority_changed')?.changes?.priority,
    { from: 'medium', to: 'critical' },
    'request.priority_changed with changes.priority',
  );
  // bad PATCHes write nothing
  expectError(
    t,
    await agent.api.patch(`/v1/requests/${fresh.id}`, { resolution: 'no status change' }),
    400,
    'VALIDATION_ERROR',
    'resolution without status resolved',
  );
  expectError(
    t,
    await agent.api.patch(`/v1/requests/${fresh.id}`, { status: 'sleeping' }),
    400,
    'VALIDATION_ERROR',
    'unknown status',
  );
  expectError(
    t,
    await agent.api.patch(`/v1/requests/${fresh.id}`, {}),
    400,
    'VALIDATION_ERROR',
    'empty PATCH',
  );
  expectError(
    t,
    await agent.api.patch(`/v1/requests/${ABSENT.request}`, { priority: 'low' }),
    404,
    'NOT_FOUND',
    'PATCH unknown',
  );
});

t.test('comments: internal notes are invisible to a viewer', async (t) => {
  const req = await createRequest(t, agent.api, {}, ledger);
  const pub = expectOk(
    t,
    await agent.api.post(`/v1/requests/${req.id}/comments`, { content: 'We are on it.' }),
    201,
    'public comment',
  );
  expectShape(t, RequestComment, pub, 'comment');
  t.match(pub?.id, /^cmt_/, 'comment id prefix cmt_');
  t.equal(pub?.isInternal, false, 'isInternal defaults to false');
  t.same(pub?.author, { id: agent.id, name: agent.name }, 'author {id, name}');
  ledger.record(req.id, 'request.comment_added');
  const note = expectOk(
    t,
    await agent.api.post(`/v1/requests/${req.id}/comments`, {
      content: 'Customer is grumpy.',
      isInternal: true,
    }),
    201,
    'internal note',
  );
  t.equal(note?.isInternal, true, 'internal note');
  ledger.record(req.id, 'request.comment_added');

  const asAgent = expectOk(t, await agent.api.get(`/v1/requests/${req.id}`), 200, 'agent reads');
  t.same(
    asAgent?.comments?.map((c: Json) => c.id),
    [pub?.id, note?.id],
    'agent sees both, oldest first',
  );
  for (const c of asAgent?.comments ?? []) expectShape(t, RequestComment, c, 'comment in single read');
  const asViewer = expectOk(t, await viewer.api.get(`/v1/requests/${req.id}`), 200, 'viewer reads');
  t.same(
    asViewer?.comments?.map((c: Json) => c.id),
    [pub?.id],
    'viewer sees only the public comment',
  );
  t.notOk(
    JSON.stringify(asViewer).includes('grumpy'),
    'the internal text appears nowhere in the viewer read',
  );
  // The comments alone, paged like every list, with the same rule for internal notes.
  const listed = expectOk(t, await agent.api.get(`/v1/requests/${req.id}/comments?limit=1`), 200, 'list');
  t.same(
    listed?.comments,
    asAgent?.comments?.slice(0, 1),
    'GET /v1/requests/:id/comments: as the single read shows them',
  );
  const rest = expectOk(
    t,
    await agent.api.get(`/v1/requests/${req.id}/comments?limit=1&cursor=${listed?.pagination?.nextCursor}`),
    200,
    'next page by cursor',
  );
  t.same(
    rest?.comments?.map((c: Json) => c.id),
    [note?.id],
    'the internal note, for an agent',
  );
  const viewerList = await viewer.api.get(`/v1/requests/${req.id}/comments`);
  t.same(
    expectOk(t, viewerList, 200, 'viewer lists')?.comments?.map((c: Json) => c.id),
    [pub?.id],
    'a viewer lists only the public comment',
  );
  t.notOk(viewerList.text.includes('grumpy'), 'the internal text is not in the viewer list');
  expectError(
    t,
    await agent.api.get(`/v1/requests/${ABSENT.request}/comments`),
    404,
    'NOT_FOUND',
    'comments of an unknown request',
  );
  expectError(
    t,
    await stack.api(null).get(`/v1/requests/${req.id}/comments`),
    401,
    'UNAUTHORIZED',
    'comments need a credential',
  );
  const viewerEvents = await viewer.api.get(`/v1/requests/${req.id}/events`);
  expectOk(t, viewerEvents, 200, 'viewer reads the request events');
  t.notOk(
    viewerEvents.text.includes('grumpy'),
    "the internal note's text does not leak through the request's events",
  );

  expectError(
    t,
    await agent.api.post(`/v1/requests/${req.id}/comments`, {}),
    400,
    'VALIDATION_ERROR',
    'comment without content',
  );
  expectError(
    t,
    await viewer.api.post(`/v1/requests/${req.id}/comments`, { content: 'x' }),
    403,
    'FORBIDDEN',
    'viewer comments',
  );
  expectError(
    t,
    await agent.api.post(`/v1/requests/${ABSENT.request}/comments`, { content: 'x' }),
    404,
    'NOT_FOUND',
    'comment on unknown request',
  );
});

t.test('attachments: uploaded and downloaded byte-identical through the returned url', async (t) => {
  const req = await createRequest(t, agent.api, {}, ledger);
  const bytes = randomBytes(300 * 1024);
  const up = await agent.api.upload(`/v1/requests/${req.id}/attachments`, 'capture.bin', bytes);
  const att = expectOk(t, up, 201, 'upload');
  expectShape(t, UploadedAttachment, att, 'upload response');
  expectKeys(t, att, ['id', 'filename', 'size', 'url'], 'upload response (spec: id, filename, size, url)');
  t.match(att?.id, /^att_/, 'attachment id prefix att_');
  t.equal(att?.filename, 'capture.bin', 'filename');
  t.equal(att?.size, bytes.length, 'size in bytes');
  t.equal(att?.url, `${stack.base}/attachments/${att?.id}`, 'url = {base_url}/attachments/<id>');
  ledger.record(req.id, 'request.attachment_added');

  const text = Buffer.from('plain text, ünïcödé\n');
  const up2 = expectOk(
    t,
    await agent.api.upload(`/v1/requests/${req.id}/attachments`, 'notes.txt', text, 'text/plain'),
    201,
    'second upload',
  );
  ledger.record(req.id, 'request.attachment_added');

  // download through the url exactly as returned (absolute), with each role that may read
  for (const who of [agent, viewer]) {
    const path = new URL(att.url).pathname;
    const dl = await who.api.get(path, { headers: { accept: '*/*' } });
    t.equal(dl.status, 200, `${who.role} downloads`);
    t.ok(dl.body.equals(bytes), `${who.role}: byte-identical (${dl.body.length} bytes)`);
  }
  const dl2 = await agent.api.get(new URL(up2.url).pathname, { headers: { accept: '*/*' } });
  t.ok(dl2.body.equals(text), 'text file byte-identical');
  expectError(
    t,
    await stack.api(null).get(new URL(att.url).pathname),
    401,
    'UNAUTHORIZED',
    'download without credential',
  );

  const single = expectOk(t, await agent.api.get(`/v1/requests/${req.id}`), 200, 'read with attachments');
  t.equal(single?.attachments?.length, 2, 'two attachments listed');
  for (const a of single?.attachments ?? []) {
    expectShape(t, RequestAttachment, a, 'attachment in single read');
    t.match(a.uploadedAt, ISO_DATE, 'uploadedAt');
  }
  t.same(
    single?.attachments?.map((a: Json) => [a.id, a.filename, a.size]),
    [
      [att.id, 'capture.bin', bytes.length],
      [up2.id, 'notes.txt', text.length],
    ],
    'attachment list matches the uploads',
  );
  // refusals
  const tooBig = await agent.api.upload(
    `/v1/requests/${req.id}/attachments`,
    'big.bin',
    randomBytes(ATTACHMENT_MAX_BYTES + 4096),
  );
  expectError(t, tooBig, 413, 'PAYLOAD_TOO_LARGE', 'an attachment over the limit');
  const after = expectOk(
    t,
    await agent.api.get(`/v1/requests/${req.id}`),
    200,
    'read after the refused upload',
  );
  t.equal(after?.attachments?.length, 2, 'nothing half-written: still two attachments');
  const dlHeaders = await agent.api.get(new URL(att.url).pathname, { headers: { accept: '*/*' } });
  t.match(
    String(dlHeaders.headers['content-disposition']),
    /attachment/,
    'served as a download (Content-Disposition: attachment)',
  );
  t.equal(
    dlHeaders.headers['x-content-type-options'],
    'nosniff',
    'X-Content-Type-Options: nosniff on downloads',
  );
  const notMultipart = await agent.api.post(`/v1/requests/${req.id}/attachments`, { file: 'x' });
  expectError(t, notMultipart, 415, 'UNSUPPORTED_MEDIA_TYPE', 'JSON body on the upload route');
  expectError(
    t,
    await viewer.api.upload(`/v1/requests/${req.id}/attachments`, 'x.txt', text),
    403,
    'FORBIDDEN',
    'viewer uploads',
  );
  expectError(
    t,
    await agent.api.upload(`/v1/requests/${ABSENT.request}/attachments`, 'x.txt', text),
    404,
    'NOT_FOUND',
    'upload to unknown request',
  );
});

t.test('DELETE /v1/requests/:id: admin only, then 404', async (t) => {
  const req = await createRequest(t, agent.api, {}, ledger);
  const att = expectOk(
    t,
    await agent.api.upload(`/v1/requests/${req.id}/attachments`, 'x.txt', Buffer.from('x')),
    201,
    'upload',
  );
  ledger.record(req.id, 'request.attachment_added');
  expectError(
    t,
    await agent.api.delete(`/v1/requests/${req.id}`),
    403,
    'FORBIDDEN',
    'agent deletes (spec: admin permission required)',
  );
  expectError(t, await viewer.api.delete(`/v1/requests/${req.id}`), 403, 'FORBIDDEN', 'viewer deletes');
  const del = expectOk(t, await admin.api.delete(`/v1/requests/${req.id}`), 200, 'admin deletes');
  t.same(del, { deleted: true }, 'data {deleted: true}');
  ledger.record(req.id, 'request.deleted');
  expectError(t, await admin.api.get(`/v1/requests/${req.id}`), 404, 'NOT_FOUND', 'deleted request is gone');
  expectError(
    t,
    await admin.api.get(new URL(att.url).pathname),
    404,
    'NOT_FOUND',
    "the deleted request's attachment is gone",
  );
  expectError(
    t,
    await agent.api.patch(`/v1/requests/${req.id}`, { priority: 'low' }),
    404,
    'NOT_FOUND',
    'PATCH a deleted request',
  );
  const kept = await requestEvents(
    req.id,
    (es) => es.some((e) => e.type === 'request.deleted'),
    'history of a deleted request',
  );
  t.same(
    kept.map((e) => e.type),
    ['request.created', 'request.attachment_added', 'request.deleted'],
    'its history is kept: created, attachment_added, deleted',
  );
  expectError(
    t,
    await agent.api.get(`/v1/requests/${req.id}/events`),
    404,
    'NOT_FOUND',
    "a deleted request's history is for admins only",
  );
  expectError(t, await admin.api.delete(`/v1/requests/${req.id}`), 404, 'NOT_FOUND', 'second delete');
  // The agent's requests (this file's), so the list is whole on one page on a shared stack.
  const list = expectOk(t, await admin.api.get(`/v1/requests?requester=${agent.id}&limit=100`), 200, 'list');
  t.ok(list?.pagination?.total < 100, 'the whole list is on this page');
  t.notOk(
    list?.requests?.some((r: Json) => r.id === req.id),
    'not listed any more',
  );
});

t.test('filters: status, priority, assignedTo, groupId, createdAfter, createdBefore', async (t) => {
  // A group of our own scopes every query, so other subtests' requests never interfere.
  const g = await createGroup(t, admin.api);
  const other = await createGroup(t, admin.api);
  const made: Json[] = [];
  const spec: [string, string | null, string][] = [
    ['low', null, g.id],
    ['high', agent.id, g.id],
    ['high', admin.id, g.id],
    ['critical', agent.id, g.id],
    ['medium', null, g.id],
    ['low', agent.id, other.id],
  ];
  for (const [priority, assignee, group] of spec) {
    const body: Json = { priority, assignedGroup: group };
    if (assignee) body.assignedTo = assignee;
    const r = await createRequest(t, agent.api, body, ledger);
    made.push({ ...r, priority, assignee, group });
    await sleep(15); // distinct createdAt values for the time filters
  }
  // one moves to in_progress
  expectOk(
    t,
    await agent.api.patch(`/v1/requests/${made[0].id}`, { status: 'in_progress' }),
    200,
    'status in_progress',
  );
  ledger.record(made[0].id, 'request.status_changed');

  const ids = async (query: Record<string, string>) => {
    const res = await agent.api.get(`/v1/requests${qs({ ...query, limit: 100 })}`);
    const data = expectOk(t, res, 200, `GET /v1/requests${qs(query)}`);
    return ((data?.requests ?? []) as Json[]).map((r) => r.id).sort();
  };
  const expectIds = (list: Json[]) => list.map((r) => r.id).sort();
  const inG = made.filter((m) => m.group === g.id);

  t.same(await ids({ groupId: g.id }), expectIds(inG), 'groupId');
  t.same(
    await ids({ groupId: other.id }),
    expectIds(made.filter((m) => m.group === other.id)),
    'groupId (other group)',
  );
  t.same(
    await ids({ groupId: g.id, priority: 'high' }),
    expectIds(inG.filter((m) => m.priority === 'high')),
    'priority',
  );
  t.same(
    await ids({ groupId: g.id, assignedTo: agent.id }),
    expectIds(inG.filter((m) => m.assignee === agent.id)),
    'assignedTo',
  );
  t.same(await ids({ groupId: g.id, status: 'in_progress' }), [made[0].id], 'status');
  const openish = await ids({ groupId: g.id, status: 'open' });
  t.notOk(openish.includes(made[0].id), 'status=open excludes the in_progress one');
  const pivot = made[3];
  t.same(
    await ids({ groupId: g.id, createdAfter: pivot.createdAt }),
    expectIds(inG.filter((m) => Date.parse(m.createdAt) >= Date.parse(pivot.createdAt))),
    'createdAfter (at or after)',
  );
  t.same(
    await ids({ groupId: g.id, createdBefore: pivot.createdAt }),
    expectIds(inG.filter((m) => Date.parse(m.createdAt) < Date.parse(pivot.createdAt))),
    'createdBefore (strictly before)',
  );
  t.same(
    await ids({ groupId: g.id, createdAfter: made[1].createdAt, createdBefore: made[4].createdAt }),
    expectIds(made.slice(1, 4)),
    'createdAfter + createdBefore window',
  );
  t.same(await ids({ groupId: g.id, priority: 'low', assignedTo: agent.id }), [], 'filters combine (AND)');
  for (const [k, v] of [
    ['status', 'sleeping'],
    ['priority', 'urgent'],
    ['assignedTo', 'bob'],
    ['groupId', 'nope'],
    ['createdAfter', 'yesterday'],
    ['createdBefore', '2024-13-45'],
    ['colour', 'blue'],
  ]) {
    const res = await agent.api.get(`/v1/requests${qs({ [k]: v })}`);
    expectError(t, res, 400, 'VALIDATION_ERROR', `bad filter ${k}=${v}`);
    t.match(res.json?.error?.message, new RegExp(k), `the message names ${k}`);
  }
});

t.test('page and limit: defaults 1 and 20, maximum 100', async (t) => {
  // Enough requests in total for more than one page of 100.
  const have = expectOk(t, await admin.api.get('/v1/requests?limit=1'), 200, 'count')?.pagination?.total ?? 0;
  const need = Math.max(0, 105 - have);
  for (let i = 0; i < need; i++) await createRequest(t, admin.api, { priority: 'low' }, ledger);
  const total = have + need;

  const first = expectOk(t, await admin.api.get('/v1/requests'), 200, 'no page/limit');
  t.same(
    first?.pagination,
    { page: 1, limit: 20, total, pages: Math.ceil(total / 20), nextCursor: first?.pagination?.nextCursor },
    'defaults: page 1, limit 20; total and pages (and a cursor to continue with)',
  );
  t.equal(first?.requests?.length, 20, '20 items by default');
  t.notOk('hasMore' in (first?.pagination ?? {}), 'hasMore is for event lists');
  const times = (first?.requests ?? []).map((r: Json) => Date.parse(r.createdAt));
  t.same(
    times,
    [...times].sort((a: number, b: number) => b - a),
    'newest first',
  );

  const p2 = expectOk(t, await admin.api.get('/v1/requests?page=2&limit=20'), 200, 'page 2');
  t.equal(p2?.pagination?.page, 2, 'page 2');
  const overlap = (p2?.requests ?? []).filter((r: Json) => first?.requests?.some((f: Json) => f.id === r.id));
  t.same(overlap, [], 'pages do not overlap');

  const max = expectOk(t, await admin.api.get('/v1/requests?limit=100'), 200, 'limit 100');
  t.equal(max?.requests?.length, 100, 'limit=100 gives 100');
  const over = expectOk(t, await admin.api.get('/v1/requests?limit=1000'), 200, 'limit 1000 (clamped)');
  t.equal(over?.pagination?.limit, 100, 'limit above 100 is clamped to 100');
  t.equal(over?.requests?.length, 100, 'at most 100 items');

  const beyond = expectOk(
    t,
    await admin.api.get(`/v1/requests?page=${Math.ceil(total / 20) + 5}`),
    200,
    'page past the end',
  );
  t.same(beyond?.requests, [], 'a page past the end is empty');
  for (const q of ['page=0', 'page=-1', 'page=abc', 'limit=0', 'limit=-5', 'limit=ten', 'page=1.5']) {
    expectError(
      t,
      await admin.api.get(`/v1/requests?${q}`),
      400,
      'VALIDATION_ERROR',
      `GET /v1/requests?${q}`,
    );
  }
});

/** The real curl (`/usr/bin/curl`) with its defaults, verbose: the status, the body and what was said. */
async function curl(args: string[]) {
  const { stdout, stderr } = await run(
    '/usr/bin/curl',
    ['-sS', '-v', '--max-time', '120', '-w', '\n%{http_code}', ...args],
    {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const at = stdout.lastIndexOf('\n');
  return {
    status: Number(stdout.slice(at + 1)),
    json: JSON.parse(stdout.slice(0, at)) as Json,
    trace: stderr,
  };
}

t.test(
  'curl as it comes: uploads of 1 MiB and of the 25 MiB limit, a create with Expect: 100-continue',
  async (t) => {
    const req = await createRequest(t, agent.api, {}, ledger);
    const dir = mkdtempSync(join(tmpdir(), 'sd-curl-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const auth = ['-H', `Authorization: Bearer ${agent.key}`];
    for (const [name, size] of [
      ['1MiB.bin', 1024 * 1024],
      ['25MiB.bin', ATTACHMENT_MAX_BYTES],
    ] as const) {
      const file = join(dir, name);
      writeFileSync(file, randomBytes(size));
      const up = await curl([...auth, '-F', `file=@${file}`, `${stack.base}/requests/${req.id}/attachments`]);
      t.match(up.trace, /> Expect: 100-continue/i, `${name}: curl asked for 100 Continue by itself`);
      t.match(up.trace, /< HTTP\/1\.1 100 Continue/, `${name}: and got it`);
      t.equal(up.status, 201, `${name}: uploaded (${JSON.stringify(up.json).slice(0, 200)})`);
      t.equal(up.json.data?.size, size, `${name}: every byte`);
      if (up.status === 201) ledger.record(req.id, 'request.attachment_added');
    }
    const create = await curl([
      ...auth,
      '-H',
      'Expect: 100-continue',
      '-H',
      'Content-Type: application/json',
      '-d',
      JSON.stringify({
        title: 'Sent the way PowerShell 5.1 sends it',
        description: 'x'.repeat(2048),
        priority: 'low',
      }),
      `${stack.base}/requests`,
    ]);
    t.match(
      create.trace,
      /< HTTP\/1\.1 100 Continue/,
      'a JSON create with Expect: 100-continue is continued',
    );
    t.equal(create.status, 201, `and created (${JSON.stringify(create.json).slice(0, 200)})`);
    if (create.status === 201) ledger.record(create.json.data.id, 'request.created');
  },
);

t.test('deskctl: the trash (requests deleted, restore) and a bulk job (jobs show)', async (t) => {
  const [one, two] = [
    await createRequest(t, agent.api, {}, ledger),
    await createRequest(t, agent.api, {}, ledger),
  ];
  const bulk = expectOk(
    t,
    await admin.api.post('/v1/requests/bulk', { action: 'delete', items: [{ id: one.id }, { id: two.id }] }),
    202,
    'POST /v1/requests/bulk',
  );
  const job = await eventually(
    async () => {
      const shown = await stack.deskctlJson(['jobs', 'show', bulk.id]);
      return shown.status === 'completed' && shown;
    },
    { what: 'the bulk delete completed, as deskctl jobs show sees it' },
  );
  t.match(job, { id: bulk.id, action: 'delete', total: 2, succeeded: 2, failed: 0 });
  t.same(
    job.results.map((r: Json) => [r.index, r.id, r.status]),
    [
      [0, one.id, 'succeeded'],
      [1, two.id, 'succeeded'],
    ],
  );
  for (const r of [one, two]) ledger.record(r.id, 'request.deleted');

  const trash = await stack.deskctlJson(['requests', 'deleted', '--all']);
  const mine = trash.deleted.filter((d: Json) => d.id === one.id || d.id === two.id);
  t.equal(mine.length, 2, 'both in the trash');
  for (const d of mine)
    t.ok(Date.parse(d.purgeAfter) > Date.parse(d.deletedAt), 'with when it goes for good');
  const table = await stack.deskctl(['requests', 'deleted', '--all'], { json: false });
  t.equal(table.code, 0, table.stderr);
  t.match(table.stdout, /^ID +TITLE +STATUS +PRIORITY +REQUESTER +DELETED +DELETED BY +PURGE AFTER$/m);

  const restored = await stack.deskctlJson(['requests', 'restore', one.id]);
  t.match(restored, { id: one.id, title: one.title });
  ledger.record(one.id, 'request.restored');
  expectOk(t, await agent.api.get(`/v1/requests/${one.id}`), 200, 'restored: readable again');
  const again = await stack.deskctl(['requests', 'restore', one.id]);
  t.equal(again.code, 1, 'restoring twice is refused');
  t.match(again.stderr, /CONFLICT|not deleted/);
  const unknownJob = await stack.deskctl(['jobs', 'show', 'job_01j9zq3k4m5n6p7q8r9s0t1v2j']);
  t.equal(unknownJob.code, 1);
  t.match(unknownJob.stderr, /NOT_FOUND|not found/i);
});

t.test('audit completeness: every write of this file produced exactly its events', async (t) => {
  // At least this file's fixed writes; the paging test adds as many requests as the stack, which
  // other files share, still lacks for two pages of 100.
  t.ok(ledger.size >= 28, `${ledger.size} recorded events to check`);
  await ledger.verify(t, admin.api);
});
