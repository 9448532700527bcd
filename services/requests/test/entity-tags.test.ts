import t from 'tap';
import { harness, MINUTE, validBody } from './helpers.js';

const TAG = /^"\d+-[A-Za-z0-9_-]{16}"$/;

t.test('a single read has a strong ETag; If-None-Match answers 304 until the request changes', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody())).body.data.id;

  const first = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  const tag = String(first.headers.etag);
  t.match(tag, TAG, 'a strong tag: "<revision>-<fingerprint>"');
  const again = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.equal(again.headers.etag, tag, 'the same representation, the same tag');

  const cached = await h.call(agent.principal, 'GET', `/v1/requests/${id}`, undefined, {
    'if-none-match': tag,
  });
  t.equal(cached.status, 304, 'the client holds the current representation');
  t.equal(cached.body, '', 'a 304 has no body');
  t.equal(cached.headers.etag, tag);
  const weak = await h.call(agent.principal, 'GET', `/v1/requests/${id}`, undefined, {
    'if-none-match': `"x", W/${tag}`,
  });
  t.equal(weak.status, 304, 'If-None-Match compares weakly, in a list');

  await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, { priority: 'critical' });
  const changed = await h.call(agent.principal, 'GET', `/v1/requests/${id}`, undefined, {
    'if-none-match': tag,
  });
  t.equal(changed.status, 200, 'changed: the new representation');
  t.not(changed.headers.etag, tag, 'with a new tag');

  const list = await h.call(agent.principal, 'GET', '/v1/requests');
  t.notOk(list.headers.etag, 'lists carry no ETag');
});

t.test('If-Match on PATCH and DELETE: 412 when the request changed, nothing written', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const admin = h.identity.person('admin');
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'low' }))).body.data
    .id;
  const read = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  const tag = String(read.headers.etag);

  const matched = await h.call(
    agent.principal,
    'PATCH',
    `/v1/requests/${id}`,
    { priority: 'high' },
    { 'if-match': tag },
  );
  t.equal(matched.status, 200, 'the tag just read matches');

  const stale = await h.call(
    agent.principal,
    'PATCH',
    `/v1/requests/${id}`,
    { priority: 'medium' },
    { 'if-match': tag },
  );
  t.equal(stale.status, 412, 'the request changed since that tag');
  t.equal(stale.body.error.code, 'PRECONDITION_FAILED');
  t.match(stale.body.error.message, /read it again/);
  const after = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.equal(after.body.data.priority, 'high', 'the refused PATCH changed nothing');
  t.equal((await h.events({ resourceId: id, type: 'request.priority_changed' })).length, 1, 'one event only');

  const weak = await h.call(
    agent.principal,
    'PATCH',
    `/v1/requests/${id}`,
    { priority: 'low' },
    {
      'if-match': `W/${after.headers.etag}`,
    },
  );
  t.equal(weak.status, 412, 'If-Match compares strongly: a weak tag matches nothing');
  t.match(weak.body.error.message, /weak tag .* never matches/, 'and the message says so');
  t.notMatch(weak.body.error.message, /has changed/, 'rather than blaming a change that did not happen');
  const foreign = await h.call(
    agent.principal,
    'PATCH',
    `/v1/requests/${id}`,
    { priority: 'low' },
    { 'if-match': '"abc"' },
  );
  t.equal(foreign.status, 412, 'a tag this API never gave matches nothing either');
  t.match(foreign.body.error.message, /names no ETag this API gives/);
  const any = await h.call(
    agent.principal,
    'PATCH',
    `/v1/requests/${id}`,
    { priority: 'low' },
    { 'if-match': '*' },
  );
  t.equal(any.status, 200, 'If-Match: * holds for any current revision');

  const gone = await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`, undefined, {
    'if-match': String(after.headers.etag),
  });
  t.equal(gone.status, 412, 'DELETE with a stale tag: refused');
  const current = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.equal(current.status, 200, 'and the request is still there');
  const deleted = await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`, undefined, {
    'if-match': String(current.headers.etag),
  });
  t.equal(deleted.status, 200, 'DELETE with the current tag');
});

t.test('concurrent PATCHes with the same If-Match: exactly one lands, the others get 412', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'low' }))).body.data
    .id;
  const tag = String((await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).headers.etag);
  const titles = Array.from({ length: 8 }, (_, i) => `Racing edit ${i}`);
  const answers = await Promise.all(
    titles.map((title) =>
      h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, { title }, { 'if-match': tag }),
    ),
  );
  const statuses = answers.map((a) => a.status).sort();
  t.same(statuses, [200, 412, 412, 412, 412, 412, 412, 412], 'one winner, seven refused');
  const winner = titles[answers.findIndex((a) => a.status === 200)];
  const final = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.equal(final.body.data.title, winner, "the stored title is the winner's");
  t.equal((await h.events({ resourceId: id, type: 'request.updated' })).length, 1, 'one update event');
});

t.test('a PATCH answers the ETag a read then gives: the next conditional write needs no read', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const viewer = h.identity.person('viewer');
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'low' }))).body.data
    .id;
  await h.call(agent.principal, 'POST', `/v1/requests/${id}/comments`, { content: 'note', isInternal: true });
  let tag = String((await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).headers.etag);
  for (const change of [
    { priority: 'high' },
    { title: 'Renamed', tags: ['a', 'b'] },
    { status: 'resolved', resolution: 'Rebooted' },
    { priority: 'high' }, // nothing changes: the same revision, the same tag
  ]) {
    const patched = await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, change, { 'if-match': tag });
    t.equal(patched.status, 200, `${JSON.stringify(change)}: the tag of the previous answer matches`);
    t.match(String(patched.headers.etag), TAG, 'the answer carries an ETag');
    const read = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
    t.equal(patched.headers.etag, read.headers.etag, 'the very tag a read then gives');
    tag = String(patched.headers.etag);
  }
  // The tag is of the caller's own view (a viewer does not see internal notes): theirs too.
  const byViewer = await h.call(viewer.principal, 'GET', `/v1/requests/${id}`);
  t.not(byViewer.headers.etag, tag, "another caller's view, another tag");
});

t.test("a running SLA clock's countdown keeps the tag; a status it crosses changes it", async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const read = (headers: Record<string, string> = {}) =>
    h.call(agent.principal, 'GET', `/v1/requests/${id}`, undefined, headers);
  // Critical: a 1 h response target on the fallback's round-the-clock calendar.
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'critical' }))).body
    .data.id;
  const first = await read();
  const tag = String(first.headers.etag);
  const clock = first.body.data.sla.response;
  t.equal(clock.state, 'running');

  h.clock.advance(5_000);
  const later = await read();
  t.equal(later.body.data.sla.response.remainingSeconds, clock.remainingSeconds - 5, 'the countdown moved');
  t.equal(later.headers.etag, tag, 'the same tag: only the countdown changed');
  t.equal((await read({ 'if-none-match': tag })).status, 304, 'a client holding the read gets 304');

  // A PATCH answers the tag a read gives later too, not only in the same second.
  const patched = await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, { title: 'Printer jam' });
  h.clock.advance(3_000);
  const afterPatch = await read();
  t.equal(patched.headers.etag, afterPatch.headers.etag, "the PATCH's tag, three seconds on");

  h.clock.advance(50 * MINUTE); // past 80 % of the response target
  const atRisk = await read({ 'if-none-match': String(afterPatch.headers.etag) });
  t.equal(atRisk.status, 200, 'the status turned at_risk: a new representation');
  t.equal(atRisk.body.data.sla.responseStatus, 'at_risk');
  t.not(atRisk.headers.etag, afterPatch.headers.etag, 'with a new tag');
});
