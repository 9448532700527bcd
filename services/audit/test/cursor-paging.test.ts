// Cursor pagination of the events lists (issue 17): keyset pages stable under concurrent inserts,
// Link headers, multi-value filters, bad cursors, and the request history's cursor mode.
import { type DomainEvent, newId, REQUEST_EVENTS_MAX } from '@support-desk/contracts';
import { asCaller, testMongo, testPrincipal } from '@support-desk/platform/testing';
import t from 'tap';
import { toStoredEvent } from '../src/events/ingestion.js';
import { eventModel } from '../src/store/event-model.js';
import { actors, makeEvent, prepareStore, composeForTest } from './helpers.js';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);
type Json = Record<string, any>;

t.test('cursor pagination of the events lists', async (t) => {
  const conn = await testMongo(t, 'audit');
  await prepareStore(conn);
  const { app } = await composeForTest(t, conn);
  const store = async (events: DomainEvent[]) =>
    eventModel(conn).collection.insertMany(events.map((e) => toStoredEvent(e)) as never[]);

  // 45 events, three per second, so every page boundary falls among equal timestamps.
  const request = newId('request');
  const events = Array.from({ length: 45 }, (_, i) =>
    makeEvent(i % 3 === 0 ? 'request.updated' : 'user.login', {
      resourceId: i % 3 === 0 ? request : undefined,
      actor: i % 2 === 0 ? actors.agent : actors.admin,
      at: at(100 + Math.floor(i / 3)),
    }),
  );
  await store(events);
  const newestFirst = [...events]
    .sort((a, b) => b.timestamp.localeCompare(a.timestamp) || b.id.localeCompare(a.id))
    .map((e) => e.id);

  const admin = asCaller(testPrincipal('admin'));
  const agent = asCaller(testPrincipal('agent'));
  const get = async (url: string, headers = admin) => {
    const res = await app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: res.json() as Json, link: res.headers.link as string | undefined };
  };
  const ids = (body: Json) => body.data.events.map((e: Json) => e.id as string);
  /** The URL of one relation of a Link header. */
  const linkTo = (link: string | undefined, rel: string) =>
    link
      ?.split(', ')
      .find((l) => l.endsWith(`rel="${rel}"`))
      ?.match(/^<([^>]+)>/)?.[1];

  t.test('paging by cursor while events are inserted: nothing skipped or repeated', async (t) => {
    const seen: string[] = [];
    let page = await get('/v1/events?limit=7');
    t.equal(page.status, 200);
    let cursor = page.body.data.pagination.nextCursor as string | null;
    seen.push(...ids(page.body));
    for (let n = 0; n < 20 && cursor; n++) {
      // Newer events, and older ones on both sides of the position, land between the calls.
      await store([
        makeEvent('user.login', { at: at(1000 + n) }),
        makeEvent('user.login', { at: at(100 + n) }),
        makeEvent('user.login', { at: at(50) }),
      ]);
      page = await get(`/v1/events?limit=7&cursor=${cursor}`);
      t.equal(page.status, 200, `page ${n + 2}`);
      t.same(Object.keys(page.body.data.pagination).sort(), ['hasMore', 'limit', 'nextCursor', 'prevCursor']);
      seen.push(...ids(page.body));
      cursor = page.body.data.pagination.nextCursor;
      t.equal(page.body.data.pagination.hasMore, cursor !== null, 'hasMore says whether nextCursor leads on');
    }
    t.equal(cursor, null, 'the end was reached');
    t.equal(new Set(seen).size, seen.length, 'no event twice');
    const original = seen.filter((id) => newestFirst.includes(id));
    t.same(original, newestFirst, 'every event present at the start, once, newest first');
    await eventModel(conn).deleteMany({ _id: { $nin: events.map((e) => e.id) } });
  });

  t.test('Link headers: page numbers in page mode, cursors in cursor mode; prev goes back', async (t) => {
    const first = await get('/v1/events?limit=10&type=user.login');
    t.equal(linkTo(first.link, 'next'), '/v1/events?limit=10&type=user.login&page=2', 'page mode: next page');
    t.notOk(linkTo(first.link, 'prev'), 'no prev on page 1');
    const p2 = await get(
      `/v1/events?limit=10&type=user.login&cursor=${first.body.data.pagination.nextCursor}`,
    );
    const next = linkTo(p2.link, 'next');
    const prev = linkTo(p2.link, 'prev');
    t.match(next, /^\/v1\/events\?limit=10&type=user\.login&cursor=[A-Za-z0-9_-]+$/, 'filters kept');
    t.ok(prev, 'prev in cursor mode');
    const back = await get(prev!);
    t.same(ids(back.body), ids(first.body), 'prev leads back to the first page');
    t.equal(back.body.data.pagination.prevCursor, null, 'and nothing before it');
    const forward = await get(next!);
    t.same(
      [...ids(first.body), ...ids(p2.body), ...ids(forward.body)],
      newestFirst.filter((id) => events.find((e) => e.id === id)!.type === 'user.login').slice(0, 30),
    );
  });

  t.test('page mode keeps the spec shape and adds nextCursor', async (t) => {
    const { body } = await get('/v1/events?limit=20&page=2');
    const { nextCursor, ...rest } = body.data.pagination;
    t.same(rest, { page: 2, limit: 20, total: 45, pages: 3, hasMore: true });
    const after = await get(`/v1/events?limit=20&cursor=${nextCursor}`);
    t.same(ids(after.body), newestFirst.slice(40), 'the cursor of a numbered page continues after it');
    const deep = await get(`/v1/events?limit=100&page=1000000`);
    t.same(deep.body.data.events, [], 'page mode still ends at the last page');
  });

  t.test('multi-value enum filters', async (t) => {
    const both = await get('/v1/events?limit=100&resourceType=request,user');
    t.equal(both.body.data.pagination.total, 45);
    const roles = await get('/v1/events?limit=100&actor.role=admin,viewer');
    t.same(
      ids(roles.body),
      newestFirst.filter((id) => events.find((e) => e.id === id)!.actor.role === 'admin'),
    );
    t.equal((await get('/v1/events?actor.role=admin,agent&actorRole=agent,admin')).status, 200, 'same set');
    for (const q of [
      'resourceType=request,ticket',
      'actor.role=admin,',
      'actor.role=admin&actorRole=agent',
    ]) {
      const bad = await get(`/v1/events?${q}`);
      t.equal(bad.status, 400, q);
      t.equal(bad.body.error.code, 'VALIDATION_ERROR', q);
    }
  });

  t.test('bad cursors are 400 on query.cursor; cursor with page is 400', async (t) => {
    const cursor = (await get('/v1/events?limit=5')).body.data.pagination.nextCursor;
    const cases: [string, RegExp][] = [
      ['cursor=not-a-cursor', /query\.cursor/],
      [`cursor=${cursor}x`, /query\.cursor/],
      [`cursor=${cursor}&type=user.login`, /query\.cursor/],
      [`cursor=${cursor}&page=2`, /query\.page/],
      ['cursor=', /query\.cursor/],
    ];
    for (const [q, field] of cases) {
      const res = await get(`/v1/events?${q}`);
      t.equal(res.status, 400, q);
      t.match(res.body.error.message, field, q);
    }
    t.equal((await get(`/v1/events?cursor=${cursor}&limit=50`)).status, 200, 'limit may change');
  });

  t.test('request history: the spec answer by default, cursor pages on demand', async (t) => {
    const history = events.filter((e) => e.resourceId === request).map((e) => e.id);
    const plain = await get(`/v1/requests/${request}/events`, agent);
    t.same(Object.keys(plain.body.data), ['events'], 'no pagination object without cursor or limit');
    t.same(ids(plain.body), history, 'oldest first');
    t.notOk(plain.link, 'no Link when the history is whole');
    const seen: string[] = [];
    let url: string | undefined = `/v1/requests/${request}/events?limit=4`;
    for (let n = 0; n < 10 && url; n++) {
      const page = await get(url, agent);
      t.equal(page.status, 200, url);
      seen.push(...ids(page.body));
      url = linkTo(page.link, 'next');
    }
    t.same(seen, history, 'the Link next chain walks the whole history');
    const bad = await get(
      `/v1/requests/${newId('request')}/events?cursor=${(await get(`/v1/requests/${request}/events?limit=2`, agent)).body.data.pagination.nextCursor}`,
      agent,
    );
    t.equal(bad.status, 400, "another request's cursor");
  });

  t.test('request history: deletion hides it from non-admins on every page', async (t) => {
    const gone = newId('request');
    await store([
      makeEvent('request.created', { resourceId: gone, at: at(1) }),
      makeEvent('request.updated', { resourceId: gone, at: at(2) }),
      makeEvent('request.deleted', { resourceId: gone, actor: actors.admin, at: at(3) }),
    ]);
    const first = await get(`/v1/requests/${gone}/events?limit=1`, agent);
    t.equal(first.status, 404, 'a page without the deletion still answers 404');
    const kept = await get(`/v1/requests/${gone}/events?limit=1`);
    t.equal(kept.status, 200, 'an admin pages it');
    const rest = await get(
      `/v1/requests/${gone}/events?cursor=${kept.body.data.pagination.nextCursor}`,
      agent,
    );
    t.equal(rest.status, 404);
  });

  t.test('a history cut at its maximum says where the rest is', async (t) => {
    const long = newId('request');
    await store(
      Array.from({ length: REQUEST_EVENTS_MAX + 5 }, (_, i) =>
        makeEvent('request.updated', { resourceId: long, at: at(i) }),
      ),
    );
    const cut = await get(`/v1/requests/${long}/events`);
    t.equal(cut.body.data.events.length, REQUEST_EVENTS_MAX);
    const next = linkTo(cut.link, 'next');
    t.match(next, /limit=100/, 'Link next, in pages of 100');
    const rest = await get(next!);
    t.equal(rest.body.data.events.length, 5, 'the 5 beyond the maximum');
    t.equal(rest.body.data.pagination.hasMore, false);
  });
});
