import { newId, type Principal, requestsRouteSchemas } from '@support-desk/contracts';
import t from 'tap';
import { contractRoute, createHttpApp, type HttpApp, requirePrincipal } from '../src/subpaths/http.js';
import { asPrincipal, bodyAsSent, testEnv, testLogger, testPrincipal } from '../src/testing/index.js';

async function appWithRoutes(t: { teardown(fn: () => unknown): void }) {
  const app: HttpApp = createHttpApp({ logger: testLogger() });
  requirePrincipal(app, { verifyKeys: testEnv.principalKeys.verifyKeys, audience: 'requests' });
  const seen: unknown[] = [];
  contractRoute(app, requestsRouteSchemas, 'POST /v1/requests', async (request) => {
    // Typed by the contract: no casts (a wrong field name would not compile).
    seen.push({ title: request.body.title, priority: request.body.priority });
    return {
      id: newId('request'),
      title: request.body.title,
      status: 'open' as const,
      createdAt: new Date().toISOString(),
    };
  });
  contractRoute(app, requestsRouteSchemas, 'DELETE /v1/requests/:id', async (request) => {
    seen.push(request.params.id);
    return { deleted: true as const };
  });
  contractRoute(app, requestsRouteSchemas, 'GET /v1/attachments/:id', async (request, reply) =>
    reply
      .header('content-type', 'application/octet-stream')
      .send(Buffer.from(`bytes of ${request.params.id}`)),
  );
  t.teardown(() => app.close());
  return { app, seen };
}

const as = (principal: Principal, method: string, url: string, payload?: unknown) =>
  asPrincipal(principal, { audience: 'requests', method, url, ...bodyAsSent(method, url, payload) });

const body = { title: 'Printer on fire', description: 'Smoke', priority: 'high' };

t.test('a contract route answers in the envelope with its documented success status', async (t) => {
  const { app, seen } = await appWithRoutes(t);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/requests',
    headers: as(testPrincipal('agent'), 'POST', '/v1/requests', body),
    payload: body,
  });
  t.equal(res.statusCode, 201, 'the 201 of the contract, not 200');
  t.match(res.json(), { success: true, data: { title: 'Printer on fire', status: 'open' } });
  t.same(seen, [{ title: 'Printer on fire', priority: 'high' }]);
  t.equal(
    res.headers.location,
    `/v1/requests/${res.json().data.id}`,
    "Location names the created resource by the contract's path (the gateway makes it absolute)",
  );
  const deleted = await app.inject({
    method: 'DELETE',
    url: `/v1/requests/${res.json().data.id}`,
    headers: as(testPrincipal('admin'), 'DELETE', `/v1/requests/${res.json().data.id}`),
  });
  t.notOk(deleted.headers.location, 'an answer that creates nothing names nothing');
});

t.test('the scope comes from PUBLIC_ROUTES and is checked before validation', async (t) => {
  const { app, seen } = await appWithRoutes(t);
  const viewer = as(testPrincipal('viewer'), 'POST', '/v1/requests', {});
  const invalid = await app.inject({ method: 'POST', url: '/v1/requests', headers: viewer, payload: {} });
  t.equal(invalid.statusCode, 403, 'a caller without requests:write learns nothing from a 400');
  t.match(invalid.json(), { success: false, error: { code: 'FORBIDDEN', message: /requests:write/ } });

  const id = newId('request');
  const agent = as(testPrincipal('agent'), 'DELETE', `/v1/requests/${id}`);
  const del = await app.inject({ method: 'DELETE', url: `/v1/requests/${id}`, headers: agent });
  t.equal(del.statusCode, 403, 'DELETE is admin-only in the route table');
  const admin = as(testPrincipal('admin'), 'DELETE', `/v1/requests/${id}`);
  const ok = await app.inject({ method: 'DELETE', url: `/v1/requests/${id}`, headers: admin });
  t.same(ok.json(), { success: true, data: { deleted: true } });
  t.same(seen, [id], 'only the permitted call reached the handler');

  const poster = as(testPrincipal('agent'), 'POST', '/v1/requests', {});
  const bad = await app.inject({ method: 'POST', url: '/v1/requests', headers: poster, payload: {} });
  t.equal(bad.statusCode, 400, 'with the scope, the schema validates');
  t.equal(bad.json().error.code, 'VALIDATION_ERROR');
});

t.test('a handler that sends its own answer (a download) is passed through', async (t) => {
  const { app } = await appWithRoutes(t);
  const id = newId('attachment');
  const res = await app.inject({
    method: 'GET',
    url: `/v1/attachments/${id}`,
    headers: as(testPrincipal('viewer'), 'GET', `/v1/attachments/${id}`),
  });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/octet-stream');
  t.equal(res.body, `bytes of ${id}`);
});

t.test('a route missing from PUBLIC_ROUTES cannot be registered', async (t) => {
  const app = createHttpApp({ logger: testLogger() });
  t.teardown(() => app.close());
  const schemas = { 'GET /v1/nowhere': { response: {} } };
  t.throws(() => contractRoute(app, schemas, 'GET /v1/nowhere', async () => ({})), /not in PUBLIC_ROUTES/);
});
