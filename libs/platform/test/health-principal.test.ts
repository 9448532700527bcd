import {
  createForwardedSigner,
  createPrincipalSigner,
  createPrincipalVerifier,
  principalClaims,
  signClaims,
  signClaimsBatch,
} from '../src/subpaths/core.js';
import {
  createOneTimeIds,
  createHttpApp,
  ok,
  registerHealth,
  requirePrincipal,
  requireScope,
} from '../src/subpaths/http.js';
import { ensureIndexes, pingMongo } from '../src/subpaths/service.js';
import { pingNats } from '../src/subpaths/messaging.js';
import {
  eventually,
  testLogger,
  testMongo,
  testNats,
  testPrincipal,
  asPrincipal,
  testEnv,
  testPrincipalKeys,
} from '../src/testing/index.js';
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import t from 'tap';

t.test('readyz reports the real dependencies, livez the process', async (t) => {
  const conn = await testMongo(t, 'health');
  const { nc } = await testNats(t);
  const app = createHttpApp({ logger: testLogger() });
  let natsUp = true;
  const state = registerHealth(
    app,
    {
      mongodb: () => pingMongo(conn),
      nats: async () => {
        if (!natsUp) throw new Error('down');
        await pingNats(nc);
      },
    },
    { intervalMs: 50, downAfterMs: 100, jitterMs: 0 },
  );
  t.teardown(() => app.close());

  t.same((await app.inject('/livez')).json(), { success: true, data: { status: 'ok' } });
  const ready = await eventually(async () => {
    const res = await app.inject('/readyz');
    return res.statusCode === 200 ? res : null;
  });
  t.same(ready.json().data.checks, { mongodb: 'up', nats: 'up' });

  natsUp = false;
  const notReady = await eventually(async () => {
    const res = await app.inject('/readyz');
    return res.statusCode === 503 ? res : null;
  });
  t.match(notReady.json(), { success: false, error: { code: 'SERVICE_UNAVAILABLE', message: /nats/ } });

  natsUp = true;
  state.draining = true;
  t.equal((await app.inject('/readyz')).statusCode, 503, 'draining turns readiness off');
});

t.test('a dependency that answers is checked five times less often than one that fails', async (t) => {
  const app = createHttpApp({ logger: testLogger() });
  let up = true;
  let checks = 0;
  registerHealth(
    app,
    {
      store: async () => {
        checks++;
        if (!up) throw new Error('down');
      },
    },
    { intervalMs: 20, downAfterMs: 60_000 },
  );
  t.teardown(() => app.close());
  // 20 ms while failing, 100 ms while answering: a second holds about 10 checks of an answering
  // dependency (50 when it was checked at one pace); a failing one is checked at the short pace.
  const window = () => new Promise((r) => setTimeout(r, 1000));
  await window();
  const answering = checks;
  t.ok(answering >= 1 && answering <= 20, `${answering} checks of an answering dependency in a second`);
  up = false;
  checks = 0;
  await window();
  t.ok(checks > answering, `${checks} checks of a failing one in a second`);
});

t.test(
  'principal assertion: bound to one service and one call, signed by the gateway key only',
  async (t) => {
    const keys = testEnv.principalKeys;
    const sign = createPrincipalSigner(keys.signingKey);
    const verify = createPrincipalVerifier(keys.verifyKeys, 'requests');
    const principal = testPrincipal('agent');
    const call = { audience: 'requests', method: 'PATCH', url: '/v1/requests/req_1?x=1' };
    const at = { method: call.method, url: call.url };

    t.same(await verify(sign(principal, call), at), principal, 'round trip');

    const refused = async (token: string, what: string, where = at) =>
      t.rejects(verify(token, where), { code: 'UNAUTHORIZED', statusCode: 401 }, what);
    await refused(sign(principal, { ...call, audience: 'identity' }), 'issued for another service');
    await refused(sign(principal, call), 'another method', { ...at, method: 'DELETE' });
    await refused(sign(principal, call), 'another path', { ...at, url: '/v1/events' });
    await refused(sign(principal, call), 'another query', { ...at, url: '/v1/requests/req_1?x=2' });
    await refused(
      createPrincipalSigner(testPrincipalKeys().signingKey)(principal, call),
      'signed by another key',
    );

    const ed = createPrivateKey(keys.signingKey);
    const claims = (iat: number) => principalClaims(principal, call, iat);
    await refused(signClaims(ed, JSON.stringify(claims(Math.floor(Date.now() / 1000) - 60))), 'expired');
    const longLived = {
      ...claims(Math.floor(Date.now() / 1000) - 30),
      exp: Math.floor(Date.now() / 1000) + 3600,
    };
    await refused(
      signClaims(ed, JSON.stringify(longLived)),
      'older than an assertion may live, whatever exp says',
    );

    const [h, p, s] = sign(principal, call).split('.');
    const forged = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(p, 'base64url').toString()),
        p: { ...principal, role: 'admin' },
      }),
    ).toString('base64url');
    await refused(`${h}.${forged}.${s}`, 'tampered payload');
    await refused(`${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`, 'alg none');
    // The old shared-secret form: anyone holding a secret could sign it. Never accepted now.
    const hs256 = await new SignJWT(claims(Math.floor(Date.now() / 1000)))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(keys.verifyKeys));
    await refused(hs256, 'HS256 signed with the public key as a secret (algorithm confusion)');

    const next = testPrincipalKeys();
    const rotating = createPrincipalVerifier(`${keys.verifyKeys}\n${next.verifyKeys}`, 'requests');
    t.same(await rotating(createPrincipalSigner(next.signingKey)(principal, call), at), principal, 'new key');
    t.same(await rotating(sign(principal, call), at), principal, 'old key, during a rotation');
  },
);

t.test('requirePrincipal guards every route but health and public ones', async (t) => {
  const app = createHttpApp({ logger: testLogger() });
  requirePrincipal(app, { verifyKeys: testEnv.principalKeys.verifyKeys, audience: 'requests' });
  registerHealth(app, {});
  app.get('/v1/things', async (request) => {
    requireScope(request, 'requests:write');
    return ok({ who: request.principal.userId });
  });
  app.get('/oauth/page', { config: { public: true } }, async () => ok({ public: true }));
  t.teardown(() => app.close());

  const missing = await app.inject('/v1/things');
  t.equal(missing.statusCode, 401);
  t.equal(missing.json().error.code, 'UNAUTHORIZED');

  const bogus = await app.inject({ url: '/v1/things', headers: { 'x-sd-principal': 'nope' } });
  t.equal(bogus.statusCode, 401);

  const agent = testPrincipal('agent');
  const things = { audience: 'requests', method: 'GET', url: '/v1/things' };
  const allowed = await app.inject({ url: '/v1/things', headers: asPrincipal(agent, things) });
  t.same(allowed.json(), { success: true, data: { who: agent.userId } });

  const viewer = await app.inject({
    url: '/v1/things',
    headers: asPrincipal(testPrincipal('viewer'), things),
  });
  t.equal(viewer.statusCode, 403);
  t.match(viewer.json().error.message, /requests:write/);

  const elsewhere = asPrincipal(agent, { ...things, audience: 'audit' });
  t.equal((await app.inject({ url: '/v1/things', headers: elsewhere })).statusCode, 401, 'another audience');
  const replayed = asPrincipal(agent, { ...things, url: '/v1/other' });
  t.equal((await app.inject({ url: '/v1/things', headers: replayed })).statusCode, 401, 'another call');

  t.equal((await app.inject('/oauth/page')).statusCode, 200, 'public route needs no principal');
  t.equal((await app.inject('/livez')).statusCode, 200, 'health needs no principal');
  t.equal((await app.inject('/v1/unknown')).statusCode, 404, 'unknown routes stay 404');
});

t.test('the assertion binds the body: another body, no body, or a second upload is refused', async (t) => {
  const conn = await testMongo(t, 'onetime');
  const oneTimeIds = createOneTimeIds(conn, { logger: testLogger() });
  const app = createHttpApp({ logger: testLogger() });
  requirePrincipal(app, { verifyKeys: testEnv.principalKeys.verifyKeys, audience: 'requests', oneTimeIds });
  const handled: string[] = [];
  app.patch('/v1/things/:id', async (request) => {
    handled.push(JSON.stringify(request.body));
    return ok(request.body);
  });
  app.delete('/v1/things/:id', async () => {
    handled.push('delete');
    return ok({ deleted: true });
  });
  app.post('/oauth/form', { config: { public: true } }, async (request) => {
    handled.push(`form ${String(request.body)}`);
    return ok({ from: request.clientAddress });
  });
  app.register(async (uploads) => {
    // Like a multipart upload: the handler reads the raw stream itself.
    uploads.addContentTypeParser('application/octet-stream', (_request, _payload, done) => done(null));
    uploads.post('/v1/things/:id/upload', { config: { streamedBody: true } }, async (request) => {
      let bytes = 0;
      for await (const chunk of request.raw) bytes += (chunk as Buffer).length;
      handled.push(`upload ${bytes}`);
      return ok({ bytes });
    });
  });
  await ensureIndexes(conn);
  t.teardown(() => app.close());

  const agent = testPrincipal('agent');
  const json = { 'content-type': 'application/json' };
  const patch = { audience: 'requests', method: 'PATCH', url: '/v1/things/t1' };
  const signed = asPrincipal(agent, { ...patch, body: '{"role":"viewer"}' });
  const send = (headers: Record<string, string>, payload?: string, call = patch) =>
    app.inject({
      method: call.method,
      url: call.url,
      headers,
      ...(payload !== undefined ? { payload } : {}),
    });

  t.equal((await send({ ...json, ...signed }, '{"role":"viewer"}')).statusCode, 200, 'the body it names');
  t.equal(handled.length, 1);
  const other = await send({ ...json, ...signed }, '{"role":"admin"}');
  t.equal(other.statusCode, 401, 'the same assertion with another body (within its seconds)');
  t.equal(other.json().error.code, 'UNAUTHORIZED');
  t.equal((await send(signed)).statusCode, 401, 'the same assertion without its body');
  const chunked = await send({ ...json, ...signed, 'transfer-encoding': 'chunked' }, '{"role":"admin"}');
  t.equal(chunked.statusCode, 401, 'chunked, with another body');
  t.equal(handled.length, 1, 'no handler ran for any of them');

  const del = { audience: 'requests', method: 'DELETE', url: '/v1/things/t1' };
  const noBody = asPrincipal(agent, del);
  t.equal((await send(noBody, undefined, del)).statusCode, 200, 'no body, as it names');
  t.equal((await send({ ...json, ...noBody }, '{"x":1}', del)).statusCode, 401, 'a body it did not name');
  const textBody = await send({ 'content-type': 'text/plain', ...noBody }, 'not json', del);
  t.equal(textBody.statusCode, 415, 'a body no parser reads: refused as such, and the process lives on');

  const unbound = principalClaims(agent, { ...patch, body: '{"role":"viewer"}' });
  delete (unbound as { bd?: string }).bd;
  const ed = createPrivateKey(testEnv.principalKeys.signingKey);
  const withoutBinding = { 'x-sd-principal': signClaims(ed, JSON.stringify(unbound)) };
  t.equal(
    (await send({ ...json, ...withoutBinding }, '{"role":"viewer"}')).statusCode,
    401,
    'an assertion that binds no body is refused',
  );

  // Batched assertions (one signature for several calls) bind each call's body the same way.
  const upload = { audience: 'requests', method: 'POST', url: '/v1/things/t1/upload' };
  const [patchInBatch, deleteInBatch, uploadInBatch] = signClaimsBatch(ed, [
    JSON.stringify(principalClaims(agent, { ...patch, body: '{"role":"viewer"}' })),
    JSON.stringify(principalClaims(agent, del)),
    JSON.stringify(principalClaims(agent, { ...upload, streamed: true })),
  ]);
  const batched = (token: string) => ({ 'x-sd-principal': token });
  t.equal(
    (await send({ ...json, ...batched(patchInBatch) }, '{"role":"viewer"}')).statusCode,
    200,
    'a batched assertion: the body it names',
  );
  t.equal(
    (await send({ ...json, ...batched(patchInBatch) }, '{"role":"admin"}')).statusCode,
    401,
    'a batched assertion with another body',
  );
  t.equal((await send(batched(deleteInBatch), undefined, del)).statusCode, 200, 'its neighbour, no body');
  t.equal(
    (await send({ ...json, ...batched(deleteInBatch) }, '{"x":1}', del)).statusCode,
    401,
    'its neighbour with a body it did not name',
  );
  const octetsOnce = { 'content-type': 'application/octet-stream' };
  t.equal(
    (await send({ ...octetsOnce, ...batched(uploadInBatch) }, 'x'.repeat(10), upload)).statusCode,
    200,
    'a batched upload, by its one-time id',
  );
  t.equal(
    (await send({ ...octetsOnce, ...batched(uploadInBatch) }, 'x'.repeat(10), upload)).statusCode,
    401,
    'the same batched upload a second time',
  );
  handled.length = 0;

  const once = asPrincipal(agent, { ...upload, streamed: true });
  const octets = { 'content-type': 'application/octet-stream' };
  const first = await send({ ...octets, ...once }, 'x'.repeat(100_000), upload);
  t.same(first.json(), { success: true, data: { bytes: 100_000 } }, 'an upload, bound by a one-time id');
  const again = await send({ ...octets, ...once }, 'y'.repeat(10), upload);
  t.equal(again.statusCode, 401, 'the same upload assertion a second time');
  const digestOnly = asPrincipal(agent, { ...upload, body: 'z' });
  t.equal((await send({ ...octets, ...digestOnly }, 'z', upload)).statusCode, 401, 'an upload needs its id');
  t.same(
    handled.filter((h) => h.startsWith('upload')),
    ['upload 100000'],
    'one upload was taken',
  );

  const form = { audience: 'requests', method: 'POST', url: '/oauth/form' };
  const forwarded = {
    'x-sd-forwarded': createForwardedSigner(testEnv.principalKeys.signingKey)(
      { clientIp: '203.0.113.9', userAgent: null },
      { ...form, body: '{"a":1}' },
    ),
  };
  const ok1 = await send({ ...json, ...forwarded }, '{"a":1}', form);
  t.same(ok1.json().data, { from: '203.0.113.9' }, 'a forwarding assertion with its body');
  const ok2 = await send({ ...json, ...forwarded }, '{"a":2}', form);
  t.equal(ok2.statusCode, 401, 'a forwarding assertion binds its body too (the address with it)');
});
