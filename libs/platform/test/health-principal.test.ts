import {
  createPrincipalSigner,
  createPrincipalVerifier,
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
} from '../src/testing/index.js';
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

t.test('principal assertion: valid, expired, tampered, wrong secret, missing', async (t) => {
  const secret = testEnv.internalSecret;
  const sign = createPrincipalSigner(secret);
  const verify = createPrincipalVerifier(secret);
  const principal = testPrincipal('agent');

  t.same(await verify(await sign(principal)), principal, 'round trip');

  const expired = await new SignJWT({ p: principal })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('support-desk-gateway')
    .setAudience('support-desk-services')
    .setIssuedAt(Math.floor(Date.now() / 1000) - 120)
    .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
    .sign(new TextEncoder().encode(secret));
  await t.rejects(verify(expired), { code: 'UNAUTHORIZED' }, 'expired');

  const token = await sign(principal);
  const [h, p, s] = token.split('.');
  const forged = Buffer.from(
    JSON.stringify({
      ...JSON.parse(Buffer.from(p, 'base64url').toString()),
      p: { ...principal, role: 'admin' },
    }),
  ).toString('base64url');
  await t.rejects(verify(`${h}.${forged}.${s}`), { code: 'UNAUTHORIZED' }, 'tampered payload');

  const otherSigner = createPrincipalSigner('another-secret-that-is-long-enough-000');
  await t.rejects(verify(await otherSigner(principal)), { code: 'UNAUTHORIZED' }, 'wrong secret');

  const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`;
  await t.rejects(verify(none), { code: 'UNAUTHORIZED' }, 'alg none');
});

t.test('requirePrincipal guards every route but health and public ones', async (t) => {
  const app = createHttpApp({ logger: testLogger() });
  requirePrincipal(app, testEnv.internalSecret);
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
  const allowed = await app.inject({ url: '/v1/things', headers: await asPrincipal(agent) });
  t.same(allowed.json(), { success: true, data: { who: agent.userId } });

  const viewer = await app.inject({ url: '/v1/things', headers: await asPrincipal(testPrincipal('viewer')) });
  t.equal(viewer.statusCode, 403);
  t.match(viewer.json().error.message, /requests:write/);

  t.equal((await app.inject('/oauth/page')).statusCode, 200, 'public route needs no principal');
  t.equal((await app.inject('/livez')).statusCode, 200, 'health needs no principal');
  t.equal((await app.inject('/v1/unknown')).statusCode, 404, 'unknown routes stay 404');
});
