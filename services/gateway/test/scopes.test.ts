import { hasScope, PUBLIC_ROUTES, SCOPES, type Scope } from '@support-desk/contracts';
import t from 'tap';
import { bearer, harness } from './helpers.js';

const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, (_m, name) => `${name}_1`);

t.test('scope matrix: every public route × each scope set → allowed or 403', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const admin = h.identity.addUser('admin');
  const big = { general: 100_000, events: 100_000 };
  const scopeSets: Scope[][] = [
    [],
    ...SCOPES.map((s) => [s]),
    ['requests:read', 'requests:write'],
    [...SCOPES],
  ];
  const keys = scopeSets.map((scopes) => ({
    scopes,
    raw: h.identity.addKey(admin, { scopes, plan: 'enterprise', limits: big }).raw,
  }));
  for (const route of PUBLIC_ROUTES) {
    for (const { scopes, raw } of keys) {
      const allowed = route.scope === 'authenticated' || hasScope(scopes, route.scope);
      const res = await app.inject({ method: route.method, url: concrete(route.path), headers: bearer(raw) });
      const label = `${route.method} ${route.path} with [${scopes.join(' ')}]`;
      t.equal(res.statusCode, allowed ? 200 : 403, label);
      if (!allowed) t.match(res.json().error, { code: 'FORBIDDEN', message: new RegExp(route.scope) }, label);
    }
  }
});

t.test('effective scopes = credential scopes ∩ role scopes', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const viewer = h.identity.addUser('viewer');
  const { raw } = h.identity.addKey(viewer, { scopes: ['admin'] });
  t.equal((await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) })).statusCode, 200);
  t.equal((await app.inject({ method: 'POST', url: '/v1/requests', headers: bearer(raw) })).statusCode, 403);
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/v1/requests/req_1', headers: bearer(raw) })).statusCode,
    403,
  );
  t.equal((await app.inject({ method: 'GET', url: '/v1/events', headers: bearer(raw) })).statusCode, 403);
  const agent = h.identity.addUser('agent');
  const token = await h.jwks.sign({
    sub: agent.id,
    client_id: h.identity.addClient(),
    scope: 'requests:write users:write',
  });
  t.equal(
    (await app.inject({ method: 'POST', url: '/v1/requests', headers: bearer(token) })).statusCode,
    200,
  );
  t.equal((await app.inject({ method: 'POST', url: '/v1/users', headers: bearer(token) })).statusCode, 403);
  t.equal((await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(token) })).statusCode, 403);
});
