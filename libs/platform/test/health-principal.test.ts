import {
  createPrincipalSigner,
  createPrincipalVerifier,
  principalClaims,
  signClaims,
  createHttpApp,
  ok,
  registerHealth,
  requirePrincipal,
  requireScope,
  pingMongo,
  pingNats,
} from '../src/index.js';
import {
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
  const state = registerHealth(app, {
    mongodb: () => pingMongo(conn),
    nats: async () => {
      if (!natsUp) throw new Error('down');
      await pingNats(nc);
    },
  });
  t.teardown(() => app.close());

  t.same((await app.inject('/livez')).json(), { success: true, data: { status: 'ok' } });
  const ready = await app.inject('/readyz');
  t.equal(ready.statusCode, 200);
  t.same(ready.json().data.checks, { mongodb: 'up', nats: 'up' });

  natsUp = false;
  const notReady = await app.inject('/readyz');
  t.equal(notReady.statusCode, 503);
  t.match(notReady.json(), { success: false, error: { code: 'SERVICE_UNAVAILABLE', message: /nats/ } });

  natsUp = true;
  state.draining = true;
  t.equal((await app.inject('/readyz')).statusCode, 503, 'draining turns readiness off');
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
