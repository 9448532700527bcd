import t from 'tap';
import { body, harness } from './helpers.js';

t.test('users and groups: ETag on single reads, 304, and If-Match → 412', async (t) => {
  const h = await harness(t);
  const admin = await h.headers('admin');
  const inject = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
    extra: Record<string, string> = {},
  ) => h.app.inject({ method, url, headers: { ...admin, ...extra }, ...(payload ? { payload } : {}) });

  for (const [what, create, patch, later] of [
    [
      'user',
      () => inject('POST', '/v1/users', { email: 'etag@example.com', name: 'Etag', role: 'agent' }),
      { name: 'Renamed' },
      { isVip: true },
    ],
    [
      'group',
      () => inject('POST', '/v1/groups', { name: 'Etag group' }),
      { description: 'New' },
      { name: 'Later' },
    ],
  ] as const) {
    const id = body(await create()).data.id as string;
    const url = `/v1/${what}s/${id}`;
    const read = await inject('GET', url);
    const tag = String(read.headers.etag);
    t.match(tag, /^"\d+-[A-Za-z0-9_-]{16}"$/, `${what}: a strong ETag`);
    t.equal((await inject('GET', url, undefined, { 'if-none-match': tag })).statusCode, 304, `${what}: 304`);

    const matched = await inject('PATCH', url, patch, { 'if-match': tag });
    t.equal(matched.statusCode, 200, `${what}: PATCH with the current tag`);
    t.equal(
      matched.headers.etag,
      (await inject('GET', url)).headers.etag,
      `${what}: the PATCH answers the ETag a read then gives`,
    );
    const weak = await inject('PATCH', url, later, { 'if-match': `W/${String(matched.headers.etag)}` });
    t.equal(weak.statusCode, 412, `${what}: a weak tag never matches`);
    t.match(body(weak).error.message, /weak tag .* never matches/, `${what}: and the message says so`);
    const stale = await inject('PATCH', url, later, { 'if-match': tag });
    t.equal(stale.statusCode, 412, `${what}: PATCH with the tag from before that change`);
    t.equal(body(stale).error.code, 'PRECONDITION_FAILED');
    const now = await inject('GET', url);
    t.not(now.headers.etag, tag, `${what}: the change gave a new tag`);
    t.match(body(now).data, patch, `${what}: the first change is there`);
    t.notMatch(body(now).data, later, `${what}: the refused PATCH changed nothing`);
    const refusedDelete = await inject('DELETE', url, undefined, { 'if-match': tag });
    t.equal(refusedDelete.statusCode, 412, `${what}: DELETE with a stale tag`);
    t.equal((await inject('GET', url)).statusCode, 200, `${what}: still there`);
  }
});
