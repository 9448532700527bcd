import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { metrics } from '@support-desk/platform/metrics';
import { eventually } from '@support-desk/platform/testing';
import t from 'tap';
import { bearer, capturingLogger, type EchoCall, harness, postChunked } from './helpers.js';

const run = promisify(execFile);

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
    // A well-formed token: a call without one is refused before its body is read (401).
    headers: {
      'content-type': 'application/scim+json',
      authorization: `Bearer sdscim_okta_${'x'.repeat(43)}`,
    },
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

/** Runs the real curl (`/usr/bin/curl`, its defaults) and gives the status and the body. */
async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await run(
    '/usr/bin/curl',
    ['-sS', '--max-time', '60', '-w', '\n%{http_code}', ...args],
    {
      encoding: 'utf8',
      maxBuffer: 8 * 1024 * 1024,
    },
  );
  const at = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) };
}

t.test(
  'what a client says about its own connection stays at the gateway (real curl, real socket)',
  async (t) => {
    const h = await harness(t);
    const { app } = await h.gateway();
    const { raw } = h.identity.addKey(h.identity.addUser('admin'), { scopes: ['admin'] });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'sd-expect-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, '2MiB.bin');
    writeFileSync(file, Buffer.alloc(2 * 1024 * 1024, 7));
    const auth = ['-H', `authorization: Bearer ${raw}`];
    const json = ['-H', 'content-type: application/json', '-d', '{"title":"x"}'];
    const echoOf = (res: { status: number; body: string }) => JSON.parse(res.body).data as EchoCall;
    const HOP_BY_HOP = ['expect', 'keep-alive', 'proxy-connection', 'te', 'transfer-encoding', 'upgrade'];

    const cases: [string, string[], number][] = [
      // curl sends `Expect: 100-continue` by itself for any body over 1 MiB.
      [
        'an upload over 1 MiB, as curl sends it',
        ['-F', `file=@${file}`, `${origin}/v1/requests/req_1/attachments`],
        2 * 1024 * 1024,
      ],
      [
        'an upload sent chunked',
        [
          '-H',
          'transfer-encoding: chunked',
          '-F',
          `file=@${file}`,
          `${origin}/v1/requests/req_1/attachments`,
        ],
        2 * 1024 * 1024,
      ],
      // What Windows PowerShell 5.1 (.NET Framework) sends with every POST.
      [
        'a JSON POST with Expect: 100-continue',
        ['-H', 'expect: 100-continue', ...json, `${origin}/v1/requests`],
        13,
      ],
      [
        'Expect: 100-continue over HTTP/1.0 (ignored)',
        ['-0', '-H', 'expect: 100-continue', ...json, `${origin}/v1/requests`],
        13,
      ],
      ['Keep-Alive', ['-H', 'keep-alive: timeout=5', `${origin}/v1/requests`], 0],
      ['Upgrade without Connection', ['-H', 'upgrade: websocket', `${origin}/v1/requests`], 0],
      [
        'TE and Proxy-Connection',
        ['-H', 'te: trailers', '-H', 'proxy-connection: keep-alive', `${origin}/v1/requests`],
        0,
      ],
    ];
    for (const [what, args, bodyBytes] of cases) {
      const res = await curl([...auth, ...args]);
      t.equal(res.status, 200, `${what}: forwarded (${res.body.slice(0, 160)})`);
      if (res.status !== 200) continue;
      const echo = echoOf(res);
      t.ok(echo.bodyBytes >= bodyBytes, `${what}: the whole body reached the service`);
      t.same(
        HOP_BY_HOP.filter((name) => echo.headers[name] !== undefined && name !== 'transfer-encoding'),
        [],
        `${what}: no hop-by-hop header forwarded`,
      );
    }
    const oauth = await curl(['-H', 'expect: 100-continue', '-d', 'grant_type=x', `${origin}/oauth/token`]);
    t.equal(oauth.status, 200, 'the OAuth pass-through too');

    const unmet = await curl([...auth, '-H', 'expect: 200-ok', ...json, `${origin}/v1/requests`]);
    t.equal(unmet.status, 417, 'another expectation: 417');
    t.same(JSON.parse(unmet.body).error.code, 'EXPECTATION_FAILED', 'in the envelope');
    t.match(JSON.parse(unmet.body).error.message, /Expect: 100-continue/, 'naming what is supported');
  },
);

/**
 * Sends the headers and the first `sent` bytes of a body announced as `declared` bytes long,
 * then hangs up.
 */
function hangUpMidBody(port: number, path: string, headers: Record<string, string>, declared: number) {
  return new Promise<void>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', reject);
    socket.on('connect', () => {
      const head = Object.entries({ ...headers, host: '127.0.0.1', 'content-length': String(declared) })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
      socket.write(Buffer.alloc(Math.floor(declared / 4), 0x61), () => {
        // Give the gateway the time to start on the call (the bytes are on their way), then go.
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 200);
      });
    });
  });
}

t.test('a client that hangs up mid-body is recorded as its doing, not an upstream failure', async (t) => {
  const h = await harness(t);
  const capture = capturingLogger();
  const { app } = await h.gateway({}, undefined, capture.logger);
  const { raw } = h.identity.addKey(h.identity.addUser('admin'), { scopes: ['admin'] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const upstreamFailures = async () =>
    ((await metrics.getSingleMetric('gateway_upstream_errors_total')?.get())?.values ?? []).reduce(
      (sum, v) => sum + v.value,
      0,
    );
  const before = await upstreamFailures();
  for (const [what, path, contentType, declared] of [
    ['a streamed upload', '/v1/requests/req_1/attachments', 'multipart/form-data; boundary=x', 400_000],
    ['a JSON body', '/v1/requests', 'application/json', 40_000],
  ] as const) {
    const reqId = `hang-up-${randomUUID()}`;
    await hangUpMidBody(
      port,
      path,
      { ...bearer(raw), 'content-type': contentType, 'x-request-id': reqId },
      declared,
    );
    const done = await eventually(() => capture.of(reqId).find((l) => l.statusCode !== undefined), {
      timeoutMs: 10_000,
    });
    t.equal(done.statusCode, 499, `${what}: recorded as 499, the client closed the request`);
    t.same(
      capture
        .of(reqId)
        .filter((l) => l.level !== 'info')
        .map((l) => l.msg),
      [],
      `${what}: no warning or error (${capture
        .of(reqId)
        .map((l) => l.msg)
        .join('; ')})`,
    );
  }
  t.equal(await upstreamFailures(), before, 'no upstream failure counted');
});

t.test('a chunked body over its limit is 413 naming the limit, however slowly it comes', async (t) => {
  const h = await harness(t, { ATTACHMENT_MAX_BYTES: 100_000, JSON_BODY_LIMIT_BYTES: 2048 });
  const { app } = await h.gateway();
  const { raw } = h.identity.addKey(h.identity.addUser('admin'), { scopes: ['admin'] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  for (const [path, contentType, message] of [
    [
      '/v1/requests/req_1/attachments',
      'multipart/form-data; boundary=x',
      'attachments are limited to 97.7 KiB',
    ],
    ['/v1/requests', 'application/json', 'JSON bodies are limited to 2 KiB'],
  ]) {
    const res = await postChunked(
      port,
      path,
      { ...bearer(raw), 'content-type': contentType },
      { first: 1024, pauseMs: 300, chunks: 20 },
    );
    t.equal(res.status, 413, `${path}: refused for its size (${res.body.slice(0, 160)})`);
    t.equal(res.status === 413 && JSON.parse(res.body).error.message, message, `${path}: the limit named`);
  }
  // As curl sends a chunked upload: `Expect: 100-continue`, then the body as fast as it goes.
  const dir = mkdtempSync(join(tmpdir(), 'sd-limit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'big.bin'), Buffer.alloc(300_000, 7));
  const origin = `http://127.0.0.1:${port}`;
  for (const framing of [[], ['-H', 'transfer-encoding: chunked']]) {
    const res = await curl([
      '-H',
      `authorization: Bearer ${raw}`,
      ...framing,
      '-F',
      `file=@${join(dir, 'big.bin')}`,
      `${origin}/v1/requests/req_1/attachments`,
    ]);
    t.equal(res.status, 413, `curl ${framing.join(' ')}: refused for its size (${res.body.slice(0, 160)})`);
    t.equal(
      res.status === 413 && JSON.parse(res.body).error.message,
      'attachments are limited to 97.7 KiB',
      'the limit named',
    );
  }
});
