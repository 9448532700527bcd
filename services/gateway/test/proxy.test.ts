import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PRINCIPAL_HEADER, PUBLIC_ROUTES } from '@support-desk/contracts';
import { CALL_TIMEOUT_HEADER } from '@support-desk/platform/http';
import { createPrincipalSigner } from '@support-desk/platform/core';
import { freePort, metricValue, testEnv, testPrincipal } from '@support-desk/platform/testing';
import t from 'tap';
import { bearer, type EchoCall, harness, postChunked, startUpstream } from './helpers.js';

const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, (_m, name) => `${name}_1`);

t.test('proxying', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const admin = h.identity.addUser('admin');
  const { raw } = h.identity.addKey(admin, { scopes: ['admin'] });

  t.test('every public route reaches its owning service, path and query unchanged', async (t) => {
    for (const route of PUBLIC_ROUTES) {
      const url = `${concrete(route.path)}?page=2&limit=5`;
      const res = await app.inject({
        method: route.method,
        url,
        headers: bearer(raw),
        ...(route.method === 'POST' || route.method === 'PATCH' ? { payload: { title: 'x' } } : {}),
      });
      t.equal(res.statusCode, 200, `${route.method} ${route.path}`);
      const echo = res.json().data as EchoCall;
      t.equal(echo.service, route.service, `${route.method} ${route.path} → ${route.service}`);
      t.equal(echo.url, url);
      t.equal(echo.method, route.method);
      t.equal(
        echo.bodyBinding,
        route.stream ? 'one-time' : 'digest',
        `${route.method} ${route.path}: the assertion binds the body sent`,
      );
    }
  });

  t.test("every forwarded call carries what is left of the gateway's upstream budget", async (t) => {
    const res = await app.inject({
      method: 'GET',
      url: '/v1/requests',
      // A client cannot name its own budget: the gateway's replaces it.
      headers: { ...bearer(raw), [CALL_TIMEOUT_HEADER]: '999999' },
    });
    t.equal(res.statusCode, 200);
    const budget = Number((res.json().data as EchoCall).headers[CALL_TIMEOUT_HEADER]);
    t.ok(
      Number.isInteger(budget) && budget >= 1 && budget <= h.config.UPSTREAM_TIMEOUT_MS,
      `${budget} ms: at most UPSTREAM_TIMEOUT_MS (${h.config.UPSTREAM_TIMEOUT_MS}), less the gateway's time`,
    );
  });

  t.test('a spoofed principal header never reaches a service; the gateway signs its own', async (t) => {
    const forged = createPrincipalSigner(testEnv.principalKeys.signingKey)(testPrincipal('admin'), {
      audience: 'requests',
      method: 'GET',
      url: '/v1/requests',
    });
    const res = await app.inject({
      method: 'GET',
      url: '/v1/requests',
      headers: { ...bearer(raw), [PRINCIPAL_HEADER]: forged, 'x-request-id': 'client-req-1' },
    });
    t.equal(res.statusCode, 200);
    const echo = res.json().data as EchoCall & { principal: Record<string, unknown> };
    t.not(echo.headers[PRINCIPAL_HEADER], forged);
    t.equal(echo.principal.userId, admin.id);
    t.equal(echo.principal.email, admin.email);
    t.same((echo.principal.credential as { type: string }).type, 'api_key');
    t.equal(echo.principal.requestId, 'client-req-1');
    t.equal(echo.headers['x-request-id'], 'client-req-1');
    t.equal(res.headers['x-request-id'], 'client-req-1');
    t.notOk(echo.headers.authorization, 'the credential stays at the gateway');
  });

  t.test('x-request-id is generated when absent and returned', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(raw) });
    const id = res.headers['x-request-id'];
    t.type(id, 'string');
    t.equal((res.json().data as EchoCall).headers['x-request-id'], id);
  });

  t.test('anything not in the route table is 404 in the envelope, even authenticated', async (t) => {
    for (const [method, url] of [
      ['GET', '/v1/secret-admin'],
      ['PUT', '/v1/nothing/req_1'],
      ['GET', '/v1/requests/req_1/internal'],
      ['GET', '/v2/requests'],
    ] as const) {
      const res = await app.inject({ method, url, headers: bearer(raw) });
      t.equal(res.statusCode, 404, `${method} ${url}`);
      t.same(res.json().error.code, 'NOT_FOUND');
    }
    t.equal(h.upstreams.requests.calls.filter((c) => c.url.includes('internal')).length, 0);
  });

  t.test('OAuth and well-known paths pass without API authentication', async (t) => {
    const jwks = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    t.equal(jwks.statusCode, 200);
    t.equal((jwks.json().data as EchoCall).service, 'identity');
    const authorize = await app.inject({
      method: 'GET',
      url: '/oauth/authorize?client_id=cli_1&response_type=code',
    });
    t.equal((authorize.json().data as EchoCall).url, '/oauth/authorize?client_id=cli_1&response_type=code');
    const forged = createPrincipalSigner(testEnv.principalKeys.signingKey)(testPrincipal('admin'), {
      audience: 'identity',
      method: 'POST',
      url: '/oauth/token',
    });
    const token = await app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', [PRINCIPAL_HEADER]: forged },
      payload: 'grant_type=authorization_code&code=abc&client_id=cli_1',
    });
    t.equal(token.statusCode, 200);
    const echo = token.json().data as EchoCall;
    t.equal(echo.url, '/oauth/token');
    t.equal(echo.bodyBytes, 'grant_type=authorization_code&code=abc&client_id=cli_1'.length);
    t.equal(echo.bodyBinding, 'digest', 'the forwarding assertion binds the form sent');
    t.notOk(echo.headers[PRINCIPAL_HEADER], 'internal headers are stripped on OAuth paths too');
    t.match(
      echo.forwarded,
      { clientIp: '127.0.0.1' },
      "the client's address, in an assertion identity verifies",
    );
    t.equal(
      (authorize.json().data as EchoCall).forwarded && typeof (authorize.json().data as EchoCall).forwarded,
      'object',
      'bound to the very call, query included',
    );
    for (const url of ['/oauth/admin', '/oauth/tokens', '/.well-known/other']) {
      const res = await app.inject({ method: 'POST', url, payload: '' });
      t.equal(res.statusCode, 404, `${url}: only the authorization server's own routes reach identity`);
    }
    t.ok(token.headers['x-ratelimit-limit'], 'the token endpoint has its own limit');
  });

  t.test('bodies stream through; the size limits are enforced', async (t) => {
    const small = await app.inject({
      method: 'POST',
      url: '/v1/requests/req_1/attachments',
      headers: { ...bearer(raw), 'content-type': 'multipart/form-data; boundary=x' },
      payload: Buffer.alloc(200_000, 1),
    });
    t.equal(small.statusCode, 200);
    t.equal((small.json().data as EchoCall).bodyBytes, 200_000);
    t.equal((small.json().data as EchoCall).bodyBinding, 'one-time', 'an upload streams on, bound once');
  });

  t.test('health endpoints and documents need no credential', async (t) => {
    t.equal((await app.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    t.equal(ready.statusCode, 200);
    t.same(ready.json().data.checks, { redis: 'up', nats: 'up' });
    t.equal((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode, 200);
    const docs = await app.inject({ method: 'GET', url: '/docs' });
    t.match(docs.headers['content-type'], /text\/html/);
  });
});

t.test('size limits with a small limit, over a real socket', async (t) => {
  const h = await harness(t, { ATTACHMENT_MAX_BYTES: 100_000, JSON_BODY_LIMIT_BYTES: 2048 });
  const { app } = await h.gateway();
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const declared = await app.inject({
    method: 'POST',
    url: '/v1/requests/req_1/attachments',
    headers: { ...bearer(raw), 'content-type': 'multipart/form-data; boundary=x' },
    payload: Buffer.alloc(300_000, 1),
  });
  t.equal(declared.statusCode, 413);
  t.equal(declared.json().error.code, 'PAYLOAD_TOO_LARGE');
  t.equal(declared.json().error.message, 'attachments are limited to 97.7 KiB', 'the limit in human units');
  const json = await app.inject({
    method: 'POST',
    url: '/v1/requests',
    headers: bearer(raw),
    payload: { title: 'x'.repeat(5000) },
  });
  t.equal(json.statusCode, 413);
  t.equal(json.json().error.message, 'JSON bodies are limited to 2 KiB');

  // Chunked upload with no Content-Length: counted while streaming.
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const res = await postChunked(port, '/v1/requests/req_1/attachments', {
    ...bearer(raw),
    'content-type': 'multipart/form-data; boundary=x',
  });
  t.equal(res.status, 413, 'streamed oversize body refused');
  t.equal(JSON.parse(res.body).error.code, 'PAYLOAD_TOO_LARGE');
  t.equal(JSON.parse(res.body).error.message, 'attachments are limited to 97.7 KiB');
  t.notOk(
    h.upstreams.requests.calls.some((c) => c.bodyBytes > 100_000 + 64 * 1024),
    'no oversize body completed upstream',
  );
});

t.test('upstream down → 502, upstream too slow → 504, in the envelope', async (t) => {
  const slow = createServer(() => undefined); // accepts and never answers
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    slow.closeAllConnections();
    slow.close();
  });
  const h = await harness(t);
  const { app } = await h.gateway({
    REQUESTS_URL: `http://127.0.0.1:${await freePort()}`,
    AUDIT_URL: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`,
    UPSTREAM_TIMEOUT_MS: 300,
  });
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const down = await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) });
  t.equal(down.statusCode, 502);
  t.same(down.json(), {
    success: false,
    error: {
      code: 'SERVER_ERROR',
      message: down.json().error.message,
      requestId: down.headers['x-request-id'],
    },
  });
  const timeout = await app.inject({ method: 'GET', url: '/v1/events', headers: bearer(raw) });
  t.equal(timeout.statusCode, 504);
  t.equal(timeout.json().error.code, 'SERVICE_UNAVAILABLE');
});

t.test("each service's answers are counted by status code; the gateway's own refusals are not", async (t) => {
  const failing = createServer((_req, res) =>
    res.writeHead(503, { 'content-type': 'application/json' }).end('{"success":false}'),
  );
  await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    failing.closeAllConnections();
    failing.close();
  });
  const h = await harness(t);
  const { app } = await h.gateway({
    AUDIT_URL: `http://127.0.0.1:${(failing.address() as AddressInfo).port}`,
  });
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const answers = (service: string, http_response_status_code: string) =>
    metricValue('gateway_upstream_answers_total', { service, http_response_status_code });
  const before = {
    audit503: await answers('audit', '503'),
    requests200: await answers('requests', '200'),
    requests401: await answers('requests', '401'),
  };
  t.equal((await app.inject({ method: 'GET', url: '/v1/events', headers: bearer(raw) })).statusCode, 503);
  t.equal((await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) })).statusCode, 200);
  t.equal((await app.inject({ method: 'GET', url: '/v1/requests' })).statusCode, 401, 'refused here');
  t.equal(await answers('audit', '503'), before.audit503 + 1, "audit's 503");
  t.equal(await answers('requests', '200'), before.requests200 + 1, "requests' 200");
  t.equal(await answers('requests', '401'), before.requests401, "the gateway's 401 is not requests'");
});

t.test('several replicas of a service: calls are spread over them (undici BalancedPool)', async (t) => {
  const h = await harness(t);
  const [a, b] = [await startUpstream(t, 'requests'), await startUpstream(t, 'requests')];
  const [i1, i2] = [await startUpstream(t, 'identity'), await startUpstream(t, 'identity')];
  const { app } = await h.gateway({
    REQUESTS_URL: `${a.url},${b.url}`,
    IDENTITY_URL: `${i1.url}, ${i2.url}`,
  });
  const admin = h.identity.addUser('admin');
  const { raw } = h.identity.addKey(admin, { scopes: ['admin'] });
  for (let i = 0; i < 40; i++) {
    const res = await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) });
    t.equal(res.statusCode, 200);
    const metadata = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    t.equal(metadata.statusCode, 200);
  }
  t.ok(
    a.calls.length > 0 && b.calls.length > 0,
    `both requests replicas served (${a.calls.length} / ${b.calls.length})`,
  );
  t.equal(a.calls.length + b.calls.length, 40, 'each call once');
  t.ok(
    i1.calls.length > 0 && i2.calls.length > 0,
    `both identity replicas served OAuth (${i1.calls.length} / ${i2.calls.length})`,
  );
  t.ok(
    [...a.calls, ...b.calls].every((c) => typeof c.principal === 'object'),
    'the principal is bound to the call whichever replica serves it',
  );
});

t.test(
  'a replica that refuses connections: calls go to another, POSTs included; nothing doubles',
  async (t) => {
    const h = await harness(t);
    const live = await startUpstream(t, 'requests');
    const gone = `http://127.0.0.1:${await freePort()}`;
    const { app } = await h.gateway({ REQUESTS_URL: `${gone},${live.url}` });
    const admin = h.identity.addUser('admin');
    const { raw } = h.identity.addKey(admin, { scopes: ['admin'] });
    for (let i = 0; i < 10; i++) {
      const get = await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) });
      t.equal(get.statusCode, 200, `GET ${i + 1}`);
      const post = await app.inject({
        method: 'POST',
        url: '/v1/requests',
        headers: { ...bearer(raw), 'content-type': 'application/json' },
        payload: { title: `t${i}` },
      });
      t.equal(post.statusCode, 200, `POST ${i + 1}: refused by one replica, served by the other`);
      t.equal(
        (post.json().data as EchoCall).bodyBytes,
        JSON.stringify({ title: `t${i}` }).length,
        'whole body',
      );
    }
    t.equal(live.calls.length, 20, 'each call reached a service once');
    // An upload streams, read only once a connection is made: refused, it goes whole to the other.
    for (let i = 0; i < 6; i++) {
      const upload = await app.inject({
        method: 'POST',
        url: '/v1/requests/req_1/attachments',
        headers: { ...bearer(raw), 'content-type': 'multipart/form-data; boundary=x' },
        payload: Buffer.alloc(100_000 + i, 1),
      });
      t.equal(upload.statusCode, 200, `upload ${i + 1}`);
      t.equal((upload.json().data as EchoCall).bodyBytes, 100_000 + i, 'the whole upload, once');
    }
    t.equal(live.calls.length, 26);
  },
);

/**
 * An NDJSON export that lasts several times UPSTREAM_TIMEOUT_MS passes through whole and
 * unbuffered: undici's body timeout is the longest silence between two chunks (and is suspended
 * while the client holds the stream back), not a bound on the whole answer.
 */
t.test('a long streamed answer passes through while its chunks keep coming', async (t) => {
  const LINES = 12;
  const streaming = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    let n = 0;
    const timer = setInterval(() => {
      res.write(`${JSON.stringify({ n })}\n`);
      if (++n === LINES) {
        clearInterval(timer);
        res.end(`${JSON.stringify({ type: 'end', count: LINES })}\n`);
      }
    }, 100);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((r) => streaming.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    streaming.closeAllConnections();
    streaming.close();
  });
  const h = await harness(t);
  // 12 chunks 100 ms apart: about 1.2 s in all, more than twice the timeout, never 500 ms silent.
  const { app } = await h.gateway({
    AUDIT_URL: `http://127.0.0.1:${(streaming.address() as AddressInfo).port}`,
    UPSTREAM_TIMEOUT_MS: 500,
  });
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const res = await app.inject({
    method: 'GET',
    url: '/v1/events/export',
    headers: { ...bearer(raw), accept: 'application/x-ndjson' },
  });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^application\/x-ndjson/);
  t.equal(res.headers['transfer-encoding'], 'chunked', 'passed on as a stream, not buffered and re-sent');
  const lines = res.body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.equal(lines.length, LINES + 1, 'every line');
  t.same(lines.at(-1), { type: 'end', count: LINES }, 'to the end line');
});
