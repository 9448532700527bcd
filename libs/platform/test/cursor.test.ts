import t, { type Test } from 'tap';
import {
  AppError,
  type CursorScope,
  decodeCursor,
  encodeCursor,
  linkHeader,
  listPage,
  listWindow,
  paginationLinks,
  parseEnumList,
} from '../src/subpaths/core.js';
import { keysetQuery } from '../src/subpaths/store.js';

const scope: CursorScope = {
  sort: '-createdAt',
  kinds: ['date'],
  filters: { status: ['open'], q: undefined },
};
const at = new Date('2030-01-02T03:04:05.678Z');

function refusal(t: Test, call: () => unknown, field = 'query.cursor') {
  try {
    call();
    t.fail('expected a 400');
  } catch (err) {
    t.ok(err instanceof AppError, 'an AppError');
    const e = err as AppError;
    t.equal(e.statusCode, 400);
    t.equal(e.code, 'VALIDATION_ERROR');
    t.equal(e.details?.[0]?.field, field);
    return e.details?.[0]?.message ?? '';
  }
  return '';
}

t.test('a cursor round-trips its position and is opaque base64url', async (t) => {
  const raw = encodeCursor(scope, { keys: [at], id: 'req_1', direction: 'next' });
  t.match(raw, /^[A-Za-z0-9_-]+$/);
  t.same(decodeCursor(raw, scope), { keys: [at], id: 'req_1', direction: 'next' });
  const prev = encodeCursor(
    { ...scope, kinds: ['number', 'string'] },
    { keys: [3, 'b'], id: 'x', direction: 'prev' },
  );
  t.same(decodeCursor(prev, { ...scope, kinds: ['number', 'string'] }), {
    keys: [3, 'b'],
    id: 'x',
    direction: 'prev',
  });
  // Undefined filters do not count; key order does not matter.
  t.same(decodeCursor(raw, { ...scope, filters: { q: undefined, status: ['open'] } }).id, 'req_1');
});

t.test('a bad, tampered or mismatched cursor is a 400 on query.cursor', async (t) => {
  const raw = encodeCursor(scope, { keys: [at], id: 'req_1', direction: 'next' });
  const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const good = JSON.parse(Buffer.from(raw, 'base64url').toString()) as Record<string, unknown>;
  refusal(t, () => decodeCursor('not a cursor!', scope));
  refusal(t, () => decodeCursor('x'.repeat(2000), scope));
  refusal(t, () => decodeCursor(Buffer.from('{oops').toString('base64url'), scope));
  refusal(t, () => decodeCursor(json([1, 2]), scope));
  refusal(t, () => decodeCursor(json(null), scope));
  refusal(t, () => decodeCursor(json({ ...good, v: 2 }), scope), 'query.cursor');
  refusal(t, () => decodeCursor(json({ ...good, extra: 1 }), scope));
  refusal(t, () => decodeCursor(json({ ...good, i: 42 }), scope));
  refusal(t, () => decodeCursor(json({ ...good, d: 'x' }), scope));
  refusal(t, () => decodeCursor(json({ ...good, k: ['yesterday'] }), scope));
  refusal(t, () => decodeCursor(json({ ...good, k: [{ $gt: '' }] }), scope));
  refusal(t, () => decodeCursor(json({ ...good, k: [] }), scope));
  t.match(
    refusal(t, () => decodeCursor(raw, { ...scope, sort: 'createdAt' })),
    /sort=-createdAt/,
  );
  t.match(
    refusal(t, () => decodeCursor(raw, { ...scope, filters: { status: ['pending'] } })),
    /other filters/,
  );
});

t.test('keyset conditions for mixed directions, both ways', async (t) => {
  const order = [
    { field: 'rank', descending: true },
    { field: 'createdAt', descending: true },
    { field: '_id', descending: true },
  ];
  t.same(keysetQuery(order), { sort: { rank: -1, createdAt: -1, _id: -1 }, condition: undefined });
  t.same(keysetQuery(order, { values: [3, at, 'r'], direction: 'next' }), {
    sort: { rank: -1, createdAt: -1, _id: -1 },
    condition: {
      $or: [
        { rank: { $lt: 3 } },
        { rank: 3, createdAt: { $lt: at } },
        { rank: 3, createdAt: at, _id: { $lt: 'r' } },
      ],
    },
  });
  const prev = keysetQuery([{ field: '_id', descending: false }], { values: ['r'], direction: 'prev' });
  t.same(prev, { sort: { _id: -1 }, condition: { _id: { $lt: 'r' } } });
});

t.test('page and cursor modes, pagination and links', async (t) => {
  t.equal(refusal(t, () => listWindow({ page: 1, cursor: 'abc' }, scope), 'query.page').length > 0, true);
  const docs = [1, 2, 3].map((n) => ({ id: `r${n}`, at: new Date(at.getTime() - n) }));
  const keysOf = (d: (typeof docs)[number]) => ({ keys: [d.at], id: d.id });

  const first = listWindow({ limit: 2 }, scope);
  t.same(first, { mode: 'page', page: 1, limit: 2, skip: 0 });
  const page = listPage(docs.slice(0, 2), first, scope, keysOf, { total: 3 });
  t.same(page.pagination, { page: 1, limit: 2, total: 3, pages: 2, nextCursor: page.pagination.nextCursor });
  const next = page.pagination.nextCursor!;
  t.same(decodeCursor(next, scope), { keys: [docs[1]!.at], id: 'r2', direction: 'next' });
  t.equal(
    paginationLinks('/v1/requests?status=open&limit=2', page.pagination),
    '</v1/requests?status=open&limit=2&page=2>; rel="next"',
  );

  const second = listWindow({ limit: 2, cursor: next }, scope);
  const cursorPage = listPage(docs.slice(2), second, scope, keysOf);
  t.same(
    cursorPage.items.map((d) => d.id),
    ['r3'],
  );
  t.equal(cursorPage.pagination.nextCursor, null);
  t.equal('hasMore' in cursorPage.pagination && cursorPage.pagination.hasMore, false);
  const links = paginationLinks(`/v1/requests?status=open&limit=2&cursor=${next}`, cursorPage.pagination);
  t.match(links, /^<\/v1\/requests\?status=open&limit=2&cursor=[A-Za-z0-9_-]+>; rel="prev"$/);

  // Backwards: the store read in reverse order, one extra.
  const back = listWindow(
    { limit: 1, cursor: encodeCursor(scope, { ...keysOf(docs[2]!), direction: 'prev' }) },
    scope,
  );
  const backPage = listPage([docs[1]!, docs[0]!], back, scope, keysOf);
  t.same(
    backPage.items.map((d) => d.id),
    ['r2'],
  );
  t.ok('prevCursor' in backPage.pagination && backPage.pagination.prevCursor, 'more before');
});

t.test('link headers keep the other parameters and multi-value filters parse strictly', async (t) => {
  t.equal(linkHeader('/v1/users', []), undefined);
  t.equal(
    linkHeader('/v1/users?q=a%20b&page=3', [{ rel: 'next', set: { cursor: 'c', page: undefined } }]),
    '</v1/users?q=a+b&cursor=c>; rel="next"',
  );
  t.same(parseEnumList('query.status', 'pending,open,open', ['open', 'pending', 'closed']), [
    'open',
    'pending',
  ]);
  t.equal(parseEnumList('query.status', undefined, ['open']), undefined);
  const message = refusal(
    t,
    () => parseEnumList('query.status', 'open,nope,', ['open', 'closed']),
    'query.status',
  );
  t.match(message, /'nope', \(empty\).*open, closed/);
});
