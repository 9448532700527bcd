import { testEnv } from '@support-desk/platform/testing';
import t from 'tap';
import { loadGatewayConfig } from '../src/config.js';
import { bearer, harness } from './helpers.js';

const APP = 'https://app.example.com';

t.test('without CORS_ALLOWED_ORIGINS no origin is allowed', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const { raw } = h.identity.addKey(h.identity.addUser('agent'));
  const res = await app.inject({
    method: 'GET',
    url: '/v1/requests',
    headers: { ...bearer(raw), origin: APP },
  });
  t.equal(res.statusCode, 200);
  t.notOk(res.headers['access-control-allow-origin']);
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/v1/requests',
    headers: { origin: APP, 'access-control-request-method': 'POST' },
  });
  t.notOk(preflight.headers['access-control-allow-origin'], 'no preflight answer allows it');
});

t.test('allowed origins: preflight without credential or quota, answers readable', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway({ CORS_ALLOWED_ORIGINS: `${APP}, http://localhost:5173` });
  const { raw } = h.identity.addKey(h.identity.addUser('agent'));
  const list = () =>
    app.inject({ method: 'GET', url: '/v1/requests', headers: { ...bearer(raw), origin: APP } });

  const first = await list();
  t.equal(first.statusCode, 200);
  t.equal(first.headers['access-control-allow-origin'], APP);
  t.match(first.headers.vary, /origin/i);
  t.match(first.headers['access-control-expose-headers'], /x-request-id/);
  t.match(first.headers['access-control-expose-headers'], /x-ratelimit-remaining/);
  t.notOk(first.headers['access-control-allow-credentials'], 'no credentials unless configured');

  for (let i = 0; i < 3; i++) {
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/v1/requests',
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    t.equal(preflight.statusCode, 204, 'answered with no Authorization header');
    t.equal(preflight.headers['access-control-allow-origin'], APP);
    t.match(preflight.headers['access-control-allow-methods'], /POST/);
    t.match(preflight.headers['access-control-allow-headers'], /authorization/);
    t.equal(preflight.headers['access-control-max-age'], '600');
    t.notOk(preflight.headers['x-ratelimit-remaining'], 'no rate limit applied');
  }
  const second = await list();
  t.equal(
    Number(second.headers['x-ratelimit-remaining']),
    Number(first.headers['x-ratelimit-remaining']) - 1,
    'the three preflights spent no quota',
  );

  const other = await app.inject({
    method: 'GET',
    url: '/v1/requests',
    headers: { ...bearer(raw), origin: 'https://evil.example.net' },
  });
  t.equal(other.statusCode, 200, 'the call itself is served (CORS is for browsers)');
  t.notOk(other.headers['access-control-allow-origin'], 'but a browser may not read it');
});

t.test(
  'CORS covers the API and the token endpoints only: never the console or the OAuth pages',
  async (t) => {
    const h = await harness(t);
    const { app } = await h.gateway({ CORS_ALLOWED_ORIGINS: APP });
    const preflight = (url: string, method = 'POST') =>
      app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: APP, 'access-control-request-method': method },
      });
    for (const url of ['/v1/requests', '/v1/users/usr_1', '/oauth/token', '/oauth/revoke']) {
      const res = await preflight(url);
      t.equal(res.statusCode, 204, `${url}: preflight answered`);
      t.equal(res.headers['access-control-allow-origin'], APP, `${url}: the origin may call it`);
    }
    for (const url of [
      '/settings/login',
      '/settings/api-keys',
      '/oauth/authorize',
      '/oauth/login',
      '/oauth/logout',
      '/.well-known/jwks.json',
    ]) {
      const res = await preflight(url);
      t.notOk(res.headers['access-control-allow-origin'], `${url}: no preflight allows another origin`);
      t.not(res.statusCode, 204, `${url}: the preflight is not granted`);
    }
    for (const [method, url] of [
      ['GET', '/settings/login'],
      ['POST', '/settings/login'],
      ['GET', '/oauth/authorize?client_id=x'],
    ] as const) {
      const res = await app.inject({
        method,
        url,
        headers: { origin: APP, 'content-type': 'application/x-www-form-urlencoded' },
        payload: method === 'POST' ? 'email=a%40b.c' : undefined,
      });
      t.notOk(res.headers['access-control-allow-origin'], `${method} ${url}: not readable by ${APP}`);
    }
    const api = await app.inject({ method: 'POST', url: '/oauth/token', headers: { origin: APP } });
    t.equal(api.headers['access-control-allow-origin'], APP, 'the token endpoint answers to the origin');
    t.notOk(api.headers['access-control-allow-credentials'], 'never with credentials');
  },
);

t.test('credentialed CORS is refused; * only without credentials', async (t) => {
  const env = { PRINCIPAL_SIGNING_KEY: testEnv.principalKeys.signingKey };
  t.ok(
    loadGatewayConfig({ ...env, CORS_ALLOWED_ORIGINS: `*, ${APP}` }),
    'the rest of the settings are valid',
  );
  for (const origins of ['*', APP]) {
    t.throws(
      () => loadGatewayConfig({ ...env, CORS_ALLOWED_ORIGINS: origins, CORS_ALLOW_CREDENTIALS: 'true' }),
      /CORS_ALLOW_CREDENTIALS.*not supported/,
      `credentials refused with ${origins}`,
    );
  }
  t.throws(
    () => loadGatewayConfig({ ...env, CORS_ALLOWED_ORIGINS: 'https://app.example.com/' }),
    /is not an origin/,
  );
  t.throws(() => loadGatewayConfig({ ...env, CORS_ALLOWED_ORIGINS: 'app.example.com' }), /is not an origin/);
});
