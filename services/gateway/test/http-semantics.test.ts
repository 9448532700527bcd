import t from 'tap';
import { bearer, type EchoCall, harness } from './helpers.js';

t.test('405, HEAD and the /v1 hint', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const { raw } = h.identity.addKey(h.identity.addUser('admin'), { scopes: ['admin'] });
  const upstreamCalls = () =>
    h.upstreams.requests.calls.length + h.upstreams.identity.calls.length + h.upstreams.audit.calls.length;

  t.test('a served path with another method is 405 with Allow, before authentication', async (t) => {
    const before = upstreamCalls();
    const cases: [string, string, string][] = [
      ['PUT', '/v1/requests/req_1', 'GET, HEAD, PATCH, DELETE'],
      ['DELETE', '/v1/me', 'GET, HEAD'],
      ['POST', '/v1/events', 'GET, HEAD'],
      ['PUT', '/v1/requests', 'GET, HEAD, POST'],
      ['PATCH', '/v1/groups/grp_1/members/usr_1', 'DELETE'],
      ['OPTIONS', '/v1/users', 'GET, HEAD, POST'],
      ['DELETE', '/oauth/token', 'POST'],
      ['PUT', '/.well-known/jwks.json', 'GET, HEAD'],
      // QUERY (an IETF draft method, which Node parses) is not in fastify's router by default.
      ['QUERY', '/v1/requests', 'GET, HEAD, POST'],
      ['QUERY', '/v1/events/evt_1', 'GET, HEAD'],
      // A static path another method would read as a parameter (`PATCH /v1/requests/:id`).
      ['PATCH', '/v1/requests/changes', 'GET, HEAD'],
      ['DELETE', '/v1/requests/changes', 'GET, HEAD'],
    ];
    for (const [method, url, allow] of cases) {
      for (const headers of [{}, bearer(raw), { ...bearer(raw), 'content-type': 'text/plain' }]) {
        const payload = 'content-type' in headers ? 'a body' : undefined;
        const res = await app.inject({ method: method as 'PUT', url, headers, payload });
        t.equal(res.statusCode, 405, `${method} ${url}`);
        t.equal(res.headers.allow, allow, `${method} ${url}: Allow`);
        t.equal(res.json().error.code, 'METHOD_NOT_ALLOWED');
        t.equal(res.json().error.message, `Method ${method} is not allowed on ${url}; allowed: ${allow}`);
        t.equal(res.json().error.requestId, res.headers['x-request-id']);
      }
    }
    t.equal(upstreamCalls(), before, 'nothing reached a service');
  });

  t.test('an empty id names no resource: 404, not 405', async (t) => {
    const res = await app.inject({ method: 'PUT', url: '/v1/requests/', headers: bearer(raw) });
    t.equal(res.statusCode, 404);
    t.equal(res.json().error.code, 'NOT_FOUND');
  });

  t.test('HEAD is served wherever GET is, through authentication and the rate limit', async (t) => {
    const anonymous = await app.inject({ method: 'HEAD', url: '/v1/requests/req_1' });
    t.equal(anonymous.statusCode, 401, 'a credential is needed like for GET');
    t.equal(anonymous.body, '');

    const get = await app.inject({ method: 'GET', url: '/v1/requests/req_1?x=1', headers: bearer(raw) });
    const head = await app.inject({ method: 'HEAD', url: '/v1/requests/req_1?x=1', headers: bearer(raw) });
    t.equal(head.statusCode, 200);
    t.equal(head.body, '', 'no body');
    t.equal(head.headers['content-type'], get.headers['content-type']);
    t.ok(head.headers['x-ratelimit-remaining'], 'the rate-limit headers of a call');
    t.equal(
      Number(head.headers['x-ratelimit-remaining']),
      Number(get.headers['x-ratelimit-remaining']) - 1,
      'HEAD counts as a call',
    );
    const forwarded = h.upstreams.requests.calls.at(-1) as EchoCall;
    t.equal(forwarded.method, 'HEAD', 'forwarded as HEAD');
    t.equal(forwarded.url, '/v1/requests/req_1?x=1');
    t.match(forwarded.principal, { userId: String }, 'with an assertion bound to the HEAD call');

    for (const url of ['/v1/me', '/v1/events/evt_1', '/v1/attachments/att_1', '/v1/groups/grp_1/members']) {
      const res = await app.inject({ method: 'HEAD', url, headers: bearer(raw) });
      t.equal(res.statusCode, 200, `HEAD ${url}`);
    }
    const noGet = await app.inject({
      method: 'HEAD',
      url: '/v1/groups/grp_1/members/usr_1',
      headers: bearer(raw),
    });
    t.equal(noGet.statusCode, 405, 'no HEAD where no GET');
    t.equal(noGet.headers.allow, 'DELETE');
  });

  t.test('a path outside /v1 hints at the prefix', async (t) => {
    const cases: [string, string, string][] = [
      [
        'GET',
        '/requests',
        'Route GET /requests not found; the API lives under /v1 (did you mean /v1/requests?)',
      ],
      [
        'POST',
        '/groups/grp_1/members',
        'Route POST /groups/grp_1/members not found; the API lives under /v1 (did you mean /v1/groups/grp_1/members?)',
      ],
      [
        'GET',
        '/nothing',
        'Route GET /nothing not found; the API lives under /v1 (every route is listed at /openapi.json)',
      ],
      ['GET', '/', 'Route GET / not found; the API lives under /v1 (every route is listed at /openapi.json)'],
      ['GET', '/v1/nothing', 'Route GET /v1/nothing not found'],
      [
        'GET',
        '/v2/requests',
        'Route GET /v2/requests not found; the API lives under /v1 (every route is listed at /openapi.json)',
      ],
    ];
    for (const [method, url, message] of cases) {
      const res = await app.inject({ method: method as 'GET', url: `${url}?page=1`, headers: bearer(raw) });
      t.equal(res.statusCode, 404, `${method} ${url}`);
      t.same(res.json().error.code, 'NOT_FOUND');
      t.equal(res.json().error.message, message);
    }
  });
});

t.test('with CORS on, Allow names OPTIONS and preflights still work', async (t) => {
  const h = await harness(t, { CORS_ALLOWED_ORIGINS: 'https://app.example.com' });
  const { app } = await h.gateway();
  const res = await app.inject({
    method: 'PUT',
    url: '/v1/me',
    headers: { origin: 'https://app.example.com' },
  });
  t.equal(res.statusCode, 405);
  t.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
  t.equal(res.headers['access-control-allow-origin'], 'https://app.example.com');
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/v1/requests',
    headers: {
      origin: 'https://app.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'idempotency-key, content-type',
    },
  });
  t.equal(preflight.statusCode, 204);
  t.match(preflight.headers['access-control-allow-headers'], /idempotency-key/);
  t.match(preflight.headers['access-control-expose-headers'], /idempotent-replayed/);
});

t.test('OAuth and SCIM size limits are named in human units', async (t) => {
  const h = await harness(t, { JSON_BODY_LIMIT_BYTES: 2048 });
  const { app } = await h.gateway();
  const token = await app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `grant_type=client_credentials&pad=${'x'.repeat(70 * 1024)}`,
  });
  t.equal(token.statusCode, 413);
  t.equal(token.json().error.code, 'PAYLOAD_TOO_LARGE');
  t.equal(token.json().error.message, 'OAuth request bodies are limited to 64 KiB');
  t.equal(token.json().error.requestId, token.headers['x-request-id']);
  const scim = await app.inject({
    method: 'POST',
    url: '/scim/v2/Users',
    headers: { 'content-type': 'application/scim+json', authorization: 'Bearer sdscim_okta_x' },
    payload: JSON.stringify({ userName: 'x'.repeat(4096) }),
  });
  t.equal(scim.statusCode, 413);
  t.match(scim.headers['content-type'], /application\/scim\+json/);
  t.same(scim.json(), {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
    status: '413',
    detail: 'SCIM request bodies are limited to 2 KiB',
  });
  const fine = await app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'grant_type=client_credentials',
  });
  t.equal(fine.statusCode, 200, 'smaller bodies go through');
});
