// HTTP semantics through a real stack with two of everything (two gateways sharing Redis): 405
// with Allow, HEAD beside every GET, the /v1 hint on 404s, sizes in human units, and
// Idempotency-Key (one write for any number of concurrent retries across both gateways, the
// first answer replayed byte for byte).
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { cast } from '../src/actors.js';
import { expectOk } from '../src/expect.js';
import type { HttpResponse } from '../src/http.js';
import { startStack } from '../src/stack.js';
import { createRequest } from '../src/world.js';

const ATTACHMENT_MAX_BYTES = 64 * 1024;
const stack = await startStack(t, {
  replicas: 2,
  env: {
    ATTACHMENT_MAX_BYTES: String(ATTACHMENT_MAX_BYTES),
    REDIS_COMMAND_TIMEOUT_MS: '5000',
    // `total()` must see a create through the other replica at once: no kept count (a replica
    // keeps a page's count for LIST_TOTAL_CACHE_MS and drops it only on its own writes).
    LIST_TOTAL_CACHE_MS: '0',
  },
});
const { admin, agent } = await cast(stack);
const via = (gateway: number) => stack.apiVia(gateway, agent.key);

const total = async () => {
  const res = await admin.api.get('/v1/requests?limit=1');
  return res.json.data.pagination.total as number;
};
const errorOf = (res: HttpResponse) => res.json?.error as { code: string; message: string };

t.test('405 with Allow for a served path and another method', async (t) => {
  const id = (await createRequest(t, agent.api)).id as string;
  for (const [method, path, allow] of [
    ['PUT', `/v1/requests/${id}`, 'GET, HEAD, PATCH, DELETE'],
    ['DELETE', '/v1/me', 'GET, HEAD'],
  ]) {
    for (const api of [agent.api, agent.api.as(null)]) {
      const res = await api.send(method, path);
      t.equal(res.status, 405, `${method} ${path}`);
      t.equal(res.headers.allow, allow);
      t.equal(errorOf(res).code, 'METHOD_NOT_ALLOWED');
    }
  }
});

t.test('HEAD answers like GET without the body', async (t) => {
  const id = (await createRequest(t, agent.api)).id as string;
  const file = Buffer.from('%PDF-1.4 not really a pdf, but text\n'.repeat(20));
  const att = await agent.api.upload(`/v1/requests/${id}/attachments`, 'notes.txt', file, 'text/plain');
  t.equal(att.status, 201);
  const attachmentId = att.json.data.id as string;
  for (const path of [
    `/v1/requests/${id}`,
    '/v1/requests?limit=2',
    '/v1/me',
    `/v1/attachments/${attachmentId}`,
    '/v1/requests/req_does_not_exist',
  ]) {
    for (const gateway of [0, 1]) {
      const get = await via(gateway).get(path);
      const head = await via(gateway).send('HEAD', path);
      t.equal(head.status, get.status, `HEAD ${path}: the status of GET (${get.status})`);
      t.equal(head.body.length, 0, `HEAD ${path}: no body`);
      t.equal(head.headers['content-type'], get.headers['content-type'], `HEAD ${path}: content-type`);
      t.equal(
        head.headers['content-length'],
        String(get.body.length),
        `HEAD ${path}: content-length of the GET body`,
      );
      if (get.headers.etag) t.equal(head.headers.etag, get.headers.etag, `HEAD ${path}: etag`);
      t.ok(head.headers['x-ratelimit-remaining'], `HEAD ${path}: a counted call`);
    }
  }
  const anonymous = await agent.api.as(null).send('HEAD', `/v1/requests/${id}`);
  t.equal(anonymous.status, 401);
});

t.test('a path outside /v1 hints at the prefix', async (t) => {
  const res = await agent.api.get('/requests');
  t.equal(res.status, 404);
  t.equal(
    errorOf(res).message,
    'Route GET /requests not found; the API lives under /v1 (did you mean /v1/requests?)',
  );
});

t.test('size limits are stated in human units', async (t) => {
  const big = await agent.api.post('/v1/requests', { title: 'big', description: 'x'.repeat(1024 * 1024) });
  t.equal(big.status, 413);
  t.equal(errorOf(big).message, 'JSON bodies are limited to 1 MiB');
  const id = (await createRequest(t, agent.api)).id as string;
  // Over the file limit but within the gateway's allowance for multipart framing: the service's 413.
  const over = await agent.api.upload(`/v1/requests/${id}/attachments`, 'a.bin', Buffer.alloc(80 * 1024, 1));
  t.equal(over.status, 413);
  t.equal(errorOf(over).message, 'body.file is too large: attachments are limited to 64 KiB');
  // Far over: the gateway's own 413.
  const far = await agent.api.upload(`/v1/requests/${id}/attachments`, 'b.bin', Buffer.alloc(300 * 1024, 1));
  t.equal(far.status, 413);
  t.equal(errorOf(far).message, 'attachments are limited to 64 KiB');
});

t.test('Idempotency-Key: concurrent retries across both gateways make one request', async (t) => {
  const key = randomUUID();
  const body = { title: `Idempotent ${key}`, description: 'sent ten times at once', priority: 'high' };
  const before = await total();
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      via(i % 2).post('/v1/requests', body, { headers: { 'idempotency-key': key } }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  t.ok(
    statuses.every((s) => s === 201 || s === 409),
    `each got the answer or a 409 (${statuses.join(' ')})`,
  );
  const originals = answers.filter((a) => a.status === 201 && !a.headers['idempotent-replayed']);
  t.equal(originals.length, 1, 'exactly one original answer');
  t.equal(await total(), before + 1, 'exactly one request was created');
  for (const a of answers.filter((x) => x.status === 409))
    t.ok(a.headers['retry-after'], '409 says when to retry');

  // A sequential retry, through either gateway: the first answer again, byte for byte.
  for (const gateway of [0, 1]) {
    const retry = await via(gateway).post('/v1/requests', body, { headers: { 'idempotency-key': key } });
    t.equal(retry.status, 201);
    t.equal(retry.headers['idempotent-replayed'], 'true');
    t.equal(retry.text, originals[0].text, 'byte-identical body, so the same id');
    t.equal(
      retry.headers.location,
      `${stack.base}/requests/${originals[0].json.data.id}`,
      'the replay names the created request, like the first answer',
    );
  }
  t.equal(await total(), before + 1);

  const reused = await agent.api.post(
    '/v1/requests',
    { ...body, priority: 'low' },
    { headers: { 'idempotency-key': key } },
  );
  t.equal(reused.status, 422);
  t.equal(errorOf(reused).code, 'IDEMPOTENCY_KEY_REUSED');
  t.equal(await total(), before + 1);
});

t.test('every create answers Location: the absolute URL a GET then reads', async (t) => {
  const request = await agent.api.post('/v1/requests', {
    title: 'Located',
    description: 'Where is it?',
    priority: 'low',
  });
  const id = request.json.data.id as string;
  const stamp = randomUUID().slice(0, 8);
  const creates: [string, HttpResponse, typeof agent][] = [
    ['/v1/requests', request, agent],
    [
      '/v1/requests/:id/attachments',
      await agent.api.upload(
        `/v1/requests/${id}/attachments`,
        'a.txt',
        Buffer.from('located\n'),
        'text/plain',
      ),
      agent,
    ],
    [
      '/v1/users',
      await admin.api.post('/v1/users', {
        email: `located-${stamp}@example.com`,
        name: 'Located',
        role: 'viewer',
      }),
      admin,
    ],
    ['/v1/groups', await admin.api.post('/v1/groups', { name: `Located ${stamp}` }), admin],
    [
      '/v1/webhooks',
      await admin.api.post('/v1/webhooks', {
        url: 'http://127.0.0.1:9/located',
        events: ['request.created'],
      }),
      admin,
    ],
  ];
  for (const [path, res, who] of creates) {
    t.equal(res.status, 201, `POST ${path}: created (${res.text.slice(0, 160)})`);
    const location = String(res.headers.location);
    t.match(location, new RegExp(`^${stack.origin}/v1/`), `POST ${path}: an absolute URL at the gateway`);
    t.ok(location.endsWith(`/${res.json.data.id}`), `POST ${path}: naming the new resource`);
    const read = await who.api.get(new URL(location).pathname, { headers: { accept: '*/*' } });
    t.equal(read.status, 200, `POST ${path}: a GET of the Location reads it`);
  }
  const comment = await agent.api.post(`/v1/requests/${id}/comments`, { content: 'no URL of its own' });
  t.equal(comment.status, 201);
  t.notOk(comment.headers.location, 'a comment has no URL of its own: no Location');
});

t.test('Idempotency-Key on PATCH: a retried change is applied once', async (t) => {
  const id = (await createRequest(t, agent.api)).id as string;
  const key = randomUUID();
  const first = await agent.api.patch(
    `/v1/requests/${id}`,
    { status: 'in_progress' },
    { headers: { 'idempotency-key': key } },
  );
  t.equal(first.status, 200);
  const retry = await via(1).patch(
    `/v1/requests/${id}`,
    { status: 'in_progress' },
    { headers: { 'idempotency-key': key } },
  );
  t.equal(retry.status, 200, 'the stored answer, not a refused repeated transition');
  t.equal(retry.headers['idempotent-replayed'], 'true');
  t.equal(retry.text, first.text);
  const bad = await agent.api.post('/v1/requests', {}, { headers: { 'idempotency-key': 'x'.repeat(256) } });
  t.equal(bad.status, 400);
});

// Last: it stops a service. (The gateway's own proxy test proves the envelope of a dead upstream;
// this proves it with whole processes, and that the other services are unaffected.)
t.test('an unreachable upstream answers a JSON error, never a hang', async (t) => {
  await stack.stopService('audit');
  const res = await admin.api.get('/v1/events', { timeoutMs: 20_000 });
  t.ok([502, 503, 504].includes(res.status), `GET /v1/events with audit down → ${res.status}`);
  t.ok(res.isJson && res.json.success === false, 'error envelope');
  t.ok(
    ['SERVER_ERROR', 'SERVICE_UNAVAILABLE'].includes(res.json?.error?.code),
    `code ${res.json?.error?.code}`,
  );
  expectOk(t, await agent.api.get('/v1/requests'), 200, 'requests still served');
});
