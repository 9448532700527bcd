import type { InjectOptions } from 'fastify';
import { Type } from 'typebox';
import net from 'node:net';
import { Writable } from 'node:stream';
import t from 'tap';
import { AppError, createLogger, notFound } from '../src/subpaths/core.js';
import { createHttpApp, ok, PUBLIC_MAX_HEADER_BYTES } from '../src/subpaths/http.js';

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { logger: createLogger({ service: 'test', level: 'info', destination }), lines };
}

function buildTestApp() {
  const { logger, lines } = captureLogger();
  const app = createHttpApp({ logger, bodyLimit: 1024 });
  app.post(
    '/things',
    {
      schema: {
        body: Type.Object(
          {
            title: Type.String({ minLength: 1, maxLength: 10 }),
            priority: Type.Optional(Type.Unsafe({ type: 'string', enum: ['low', 'high'] })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => reply.code(201).send(ok(request.body)),
  );
  app.get(
    '/things',
    { schema: { querystring: Type.Object({ limit: Type.Integer({ minimum: 1, default: 20 }) }) } },
    async (request) => ok({ limit: request.query.limit }),
  );
  app.get('/missing', async () => {
    throw notFound('Thing');
  });
  app.get('/conflict', async () => {
    throw new AppError('CONFLICT', 'already there');
  });
  app.get('/boom', async () => {
    throw new Error('database password is hunter2');
  });
  app.get('/auth', async (request) => ok({ auth: request.headers.authorization }));
  return { app, lines };
}

t.test('every failure is rendered in the envelope', async (t) => {
  const { app, lines } = buildTestApp();
  t.teardown(() => app.close());

  const created = await app.inject({ method: 'POST', url: '/things', payload: { title: 'ok' } });
  t.equal(created.statusCode, 201);
  t.same(created.json(), { success: true, data: { title: 'ok' } });
  t.ok(created.headers['x-request-id'], 'request id is returned');

  const cases: [string, InjectOptions, number, string, RegExp][] = [
    [
      'missing field',
      { method: 'POST', url: '/things', payload: {} },
      400,
      'VALIDATION_ERROR',
      /body\.title is required/,
    ],
    [
      'too long',
      { method: 'POST', url: '/things', payload: { title: 'x'.repeat(11) } },
      400,
      'VALIDATION_ERROR',
      /body\.title/,
    ],
    [
      'bad enum',
      { method: 'POST', url: '/things', payload: { title: 'a', priority: 'meh' } },
      400,
      'VALIDATION_ERROR',
      /body\.priority must be one of: low, high/,
    ],
    [
      'unknown field',
      { method: 'POST', url: '/things', payload: { title: 'a', extra: 1 } },
      400,
      'VALIDATION_ERROR',
      /body\.extra is not a known field/,
    ],
    ['bad query', { method: 'GET', url: '/things?limit=abc' }, 400, 'VALIDATION_ERROR', /query\.limit/],
    ['zero query', { method: 'GET', url: '/things?limit=0' }, 400, 'VALIDATION_ERROR', /query\.limit/],
    [
      'malformed JSON',
      {
        method: 'POST',
        url: '/things',
        payload: '{"title":',
        headers: { 'content-type': 'application/json' },
      },
      400,
      'VALIDATION_ERROR',
      /not valid JSON/,
    ],
    [
      'unsupported type',
      { method: 'POST', url: '/things', payload: 'title=x', headers: { 'content-type': 'text/plain' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      /Content-Type/,
    ],
    [
      'too large',
      { method: 'POST', url: '/things', payload: { title: 'x'.repeat(2000) } },
      413,
      'PAYLOAD_TOO_LARGE',
      /too large/,
    ],
    ['unknown route', { method: 'GET', url: '/nope?x=1' }, 404, 'NOT_FOUND', /GET \/nope not found/],
    ['domain not found', { method: 'GET', url: '/missing' }, 404, 'NOT_FOUND', /Thing not found/],
    ['domain conflict', { method: 'GET', url: '/conflict' }, 409, 'CONFLICT', /already there/],
    [
      'unexpected',
      { method: 'GET', url: '/boom' },
      500,
      'SERVER_ERROR',
      /Internal server error \(error id [0-9a-f-]{36}\)/,
    ],
  ];
  for (const [name, request, status, code, message] of cases) {
    const res = await app.inject(request);
    t.equal(res.statusCode, status, `${name}: status`);
    t.match(res.headers['content-type'], /application\/json/, `${name}: JSON`);
    const body = res.json();
    t.equal(body.success, false, `${name}: success false`);
    t.equal(body.error.code, code, `${name}: code`);
    t.match(body.error.message, message, `${name}: message`);
    t.notMatch(JSON.stringify(body), /hunter2|stack|at .*\.js/, `${name}: no internals`);
  }

  const errorLine = lines.find((l) => l.msg === 'unhandled error');
  t.ok(errorLine?.errorId, 'unexpected errors are logged with an error id');
  const boom = await app.inject({ method: 'GET', url: '/boom' });
  t.ok(
    lines.some((l) => l.errorId && boom.json().error.message.includes(l.errorId as string)),
    'id in response matches the log',
  );
});

t.test('one log line per request, with request id, and no credentials', async (t) => {
  const { app, lines } = buildTestApp();
  t.teardown(() => app.close());
  await app.inject({
    method: 'GET',
    url: '/auth',
    headers: { authorization: 'Bearer sd_key_secret', 'x-request-id': 'abc-123' },
  });
  const requestLines = lines.filter((l) => l.reqId === 'abc-123');
  t.equal(requestLines.length, 1, 'exactly one line for the request');
  t.match(requestLines[0], { service: 'test', method: 'GET', url: '/auth', statusCode: 200 });
  t.notMatch(JSON.stringify(lines), /sd_key_secret/, 'the credential never reaches the log');

  const res = await app.inject({
    method: 'GET',
    url: '/auth',
    headers: { 'x-request-id': 'bad id with spaces' },
  });
  t.not(res.headers['x-request-id'], 'bad id with spaces', 'an unsafe request id is replaced');
});

t.test('the logger redacts secrets in any logged object', async (t) => {
  const { logger, lines } = captureLogger();
  logger.info({ password: 'p4ss', user: { token: 't0k', name: 'ok' }, client_secret: 'cs' }, 'hello');
  const line = JSON.stringify(lines[0]);
  t.notMatch(line, /p4ss|t0k|"cs"/);
  t.match(line, /"name":"ok"/);
});

t.test('a call that reaches a closing listener is served, asked to close its connection', async (t) => {
  // Between `close()` and the listener's end (the preClose hooks run first) a connection can
  // still be accepted: a rolling restart must not answer it with a refusal the client cannot
  // tell from a failure (fastify's bare 503, outside the envelope).
  const { app } = buildTestApp();
  let releasePreClose = () => {};
  const preCloseStarted = new Promise<void>((started) =>
    app.addHook('preClose', () => {
      started();
      return new Promise<void>((r) => (releasePreClose = r));
    }),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const closed = app.close();
  t.teardown(() => {
    releasePreClose();
    return closed;
  });
  await preCloseStarted;
  const res = await fetch(`http://127.0.0.1:${port}/things?limit=3`);
  t.equal(res.status, 200, 'served');
  t.same(await res.json(), { success: true, data: { limit: 3 } });
  t.equal(res.headers.get('connection'), 'close', 'the client is asked not to reuse the connection');
});

t.test('the NUL character is refused in a body, a query or a path, naming where', async (t) => {
  const { app } = buildTestApp();
  app.get('/things/:id', async (request) => ok(request.params));
  t.teardown(() => app.close());
  const cases: [InjectOptions, string][] = [
    [
      {
        method: 'POST',
        url: '/things',
        payload: '{"title":"a\\u0000b"}',
        headers: { 'content-type': 'application/json' },
      },
      'body.title',
    ],
    [{ method: 'POST', url: '/things', payload: { title: 'ok', 'pri\u0000': 'x' } }, 'body.pri\u0000'],
    [{ method: 'GET', url: '/things?limit=1&q=a%00' }, 'query.q'],
    [{ method: 'GET', url: '/things/ab%00c' }, 'path.id'],
  ];
  for (const [call, where] of cases) {
    const res = await app.inject(call);
    t.equal(res.statusCode, 400, `${call.method} ${call.url}`);
    t.match(res.json().error, {
      code: 'VALIDATION_ERROR',
      message: `${where} must not contain the NUL character (U+0000)`,
    });
  }
  const fine = await app.inject({ method: 'POST', url: '/things', payload: { title: 'a\\u0000b' } });
  t.equal(fine.statusCode, 201, 'the six characters \\u0000 written as text are an ordinary string');
});

t.test('what the HTTP parser refuses is answered in the envelope, at the limit each side has', async (t) => {
  /** One raw exchange on a fresh connection: the whole answer the server wrote. */
  const exchange = (port: number, raw: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(raw));
      let answer = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
      socket.on('close', () => resolve(answer)).on('error', reject);
      socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    });
  const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
  const padded = (bytes: number) =>
    `GET /things?limit=3 HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(bytes)}\r\n\r\n`;

  const serve = async (maxHeaderBytes?: number) => {
    const app = createHttpApp({ logger: captureLogger().logger, maxHeaderBytes });
    app.get('/things', async () => ok({ served: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    t.teardown(() => app.close());
    return (app.server.address() as { port: number }).port;
  };
  const gatewayLike = await serve(PUBLIC_MAX_HEADER_BYTES);
  const serviceLike = await serve();

  const tooLarge = await exchange(gatewayLike, padded(PUBLIC_MAX_HEADER_BYTES));
  t.match(tooLarge, /^HTTP\/1\.1 431 /);
  t.match(tooLarge, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
  const body = bodyOf(tooLarge);
  t.match(body, { success: false, error: { code: 'HEADERS_TOO_LARGE', message: /exceed 16 KiB/ } });
  t.match(tooLarge, new RegExp(`\\r\\nx-request-id: ${body.error.requestId}\\r\\n`, 'i'), 'the id is quoted');

  // A service behind the gateway takes what the gateway took plus the assertion that repeats it.
  const served = await exchange(serviceLike, padded(2 * PUBLIC_MAX_HEADER_BYTES));
  t.match(served, /^HTTP\/1\.1 200 /);
  t.match(bodyOf(served), { success: true });

  const garbage = await exchange(serviceLike, 'NOT HTTP AT ALL\r\n\r\n');
  t.match(garbage, /^HTTP\/1\.1 400 /);
  t.match(bodyOf(garbage), {
    success: false,
    error: { code: 'VALIDATION_ERROR', message: /not valid HTTP/ },
  });
});

t.test(
  'keys that reach Object.prototype: refused in a body, saying why; the process runs without __proto__',
  async (t) => {
    const { app } = buildTestApp();
    t.teardown(() => app.close());
    for (const payload of [
      '{"title": "ok", "__proto__": {"polluted": "yes"}}',
      '{"title": "ok", "constructor": {"prototype": {"polluted": "yes"}}}',
      '{"title": "ok", "nested": [{"__proto__": {"polluted": "yes"}}]}',
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/things',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      t.equal(res.statusCode, 400, payload);
      t.match(res.json().error, { code: 'VALIDATION_ERROR', message: /__proto__.*constructor/ }, payload);
      t.equal(({} as Record<string, unknown>).polluted, undefined, `${payload}: Object.prototype untouched`);
    }
    const broken = await app.inject({
      method: 'POST',
      url: '/things',
      headers: { 'content-type': 'application/json' },
      payload: '{"title": ',
    });
    t.match(broken.json().error, { message: 'body is not valid JSON' }, 'malformed JSON is still said so');
    const empty = await app.inject({
      method: 'POST',
      url: '/things',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    t.match(empty.json().error, { message: /body is empty/ });
    // The test runner (as every service's launcher) starts node with --disable-proto=throw.
    t.throws(() => (Object.prototype as { __proto__?: unknown }).__proto__, 'the __proto__ accessor throws');
  },
);
