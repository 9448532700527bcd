import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, testEnv } from '@support-desk/platform/testing';
import t from 'tap';
import { loadGatewayConfig } from '../src/config.js';
import { bearer, harness } from './helpers.js';
import { json, startWrites } from './write-upstream.js';

t.test('Redis unreachable: a call with a key is 503, one without is served', async (t) => {
  const writes = await startWrites(t);
  const h = await harness(t, { REQUESTS_URL: writes.url });
  const { app } = await h.gateway({}, `redis://127.0.0.1:${await freePort()}`);
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const keyed = await app.inject({
    method: 'POST',
    url: '/v1/requests',
    headers: { ...bearer(raw), ...json('k-1') },
    payload: '{}',
  });
  t.equal(keyed.statusCode, 503);
  t.equal(keyed.json().error.code, 'SERVICE_UNAVAILABLE');
  t.equal(writes.calls.length, 0);
  const plain = await app.inject({
    method: 'POST',
    url: '/v1/requests',
    headers: { ...bearer(raw), ...json() },
    payload: '{}',
  });
  t.equal(plain.statusCode, 201, 'the rate limiter fails open, and no key means no guarantee asked');
});

t.test('IDEMPOTENCY_TTL_SECONDS is validated', async (t) => {
  const env = { PRINCIPAL_SIGNING_KEY: testEnv.principalKeys.signingKey };
  t.equal(loadGatewayConfig(env).IDEMPOTENCY_TTL_SECONDS, 86_400, '24 h by default');
  t.throws(() => loadGatewayConfig({ ...env, IDEMPOTENCY_TTL_SECONDS: '10' }), /IDEMPOTENCY_TTL_SECONDS/);
  t.throws(() => loadGatewayConfig({ ...env, IDEMPOTENCY_TTL_SECONDS: 'soon' }), /IDEMPOTENCY_TTL_SECONDS/);
});

t.test('the OpenAPI document names the header, the replay marker and the 409/422', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const keyRef = { $ref: '#/components/parameters/IdempotencyKey' };
  t.equal(doc.components.parameters.IdempotencyKey.name, 'Idempotency-Key');
  t.equal(doc.components.parameters.IdempotencyKey.in, 'header');
  for (const [path, method] of [
    ['/v1/requests', 'post'],
    ['/v1/requests/{id}', 'patch'],
    ['/v1/requests/{id}/attachments', 'post'],
    ['/v1/groups/{id}/members', 'post'],
  ]) {
    const op = doc.paths[path][method];
    t.same(op.parameters.at(-1), keyRef, `${method} ${path}: Idempotency-Key`);
    t.ok(op.responses['409'] && op.responses['422'], `${method} ${path}: 409 and 422`);
    const success = Object.entries(op.responses).find(([s]) => s.startsWith('2'))?.[1] as {
      headers: Record<string, unknown>;
    };
    t.ok(success.headers['Idempotent-Replayed'], `${method} ${path}: Idempotent-Replayed`);
  }
  for (const [path, method] of [
    ['/v1/requests', 'get'],
    ['/v1/requests/{id}', 'delete'],
  ]) {
    const op = doc.paths[path][method];
    t.notOk(
      op.parameters.some((p: unknown) => JSON.stringify(p) === JSON.stringify(keyRef)),
      `${method} ${path}: no key`,
    );
    t.notOk(op.responses['422'], `${method} ${path}: no 422`);
  }
  t.match(doc.info.description, /405 METHOD_NOT_ALLOWED` with `Allow`/, '405 documented');
  t.ok(doc.paths['/v1/requests'].post.responses['409'].headers['Retry-After'], '409 says when to retry');
});

t.test('a client that hangs up before the answer: the answer is still stored for its retry', async (t) => {
  const writes = await startWrites(t);
  const h = await harness(t, { REQUESTS_URL: writes.url });
  const { app } = await h.gateway();
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const key = `hangup-${Date.now()}`;
  const body = JSON.stringify({ title: 'VPN down' });
  writes.hold();
  const client = httpRequest({
    port,
    host: '127.0.0.1',
    method: 'POST',
    path: '/v1/requests',
    headers: { ...bearer(raw), ...json(key), 'content-length': String(body.length) },
  });
  client.on('error', () => undefined);
  client.end(body);
  for (let i = 0; i < 200 && writes.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.equal(writes.calls.length, 1, 'the call reached the service');
  client.destroy();
  await new Promise((r) => setTimeout(r, 50));
  writes.release();
  const retry = async () =>
    app.inject({
      method: 'POST',
      url: '/v1/requests',
      headers: { ...bearer(raw), ...json(key) },
      payload: body,
    });
  let answer = await retry();
  // Bounded: the first call's answer is stored moments after the service gives it.
  for (let i = 0; i < 100 && answer.statusCode === 409; i++) {
    await new Promise((r) => setTimeout(r, 20));
    answer = await retry();
  }
  t.equal(answer.statusCode, 201);
  t.equal(answer.headers['idempotent-replayed'], 'true', 'the retry gets the answer the client missed');
  t.equal(writes.calls.length, 1, 'and the service saw one call');
});
