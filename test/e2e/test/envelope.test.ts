// The envelope on every success and error code, JSON for unknown routes, Content-Type and Accept
// handling, and the spec's endpoint tables: each method + path served through the gateway.
import { PUBLIC_ROUTES, routeKey } from '@support-desk/contracts';
import t from 'tap';
import { cast } from '../src/actors.js';
import { expectError, expectOk } from '../src/expect.js';
import { ABSENT, SPEC_ENDPOINTS, SPEC_OTHER_ENDPOINTS } from '../src/fixtures.js';
import { type HttpResponse, request } from '../src/http.js';
import { Ledger } from '../src/ledger.js';
import { eventually, startStack } from '../src/stack.js';
import { createGroup, createRequest, createUser, fill } from '../src/world.js';

const stack = await startStack(t);
const { admin, agent, viewer } = await cast(stack);
const ledger = new Ledger();

t.test('unknown routes answer the JSON error envelope, never HTML', async (t) => {
  expectError(t, await admin.api.get('/v1/no-such-thing'), 404, 'NOT_FOUND', 'GET /v1/no-such-thing');
  expectError(t, await admin.api.get('/v1/requests/x/y/z'), 404, 'NOT_FOUND', 'GET /v1/requests/x/y/z');
  expectError(t, await admin.api.post('/v1/nothing', { a: 1 }), 404, 'NOT_FOUND', 'POST /v1/nothing');
  expectError(t, await admin.api.get('/v2/requests'), 404, 'NOT_FOUND', 'GET /v2/requests (other version)');
  expectError(
    t,
    await stack.api(null).get('/no-such-page'),
    404,
    'NOT_FOUND',
    'GET /no-such-page (no credential)',
  );
  // A method the table does not list for a known path: 405, and Allow names the methods it has.
  const deleteMe = await admin.api.delete('/v1/me');
  expectError(t, deleteMe, 405, 'METHOD_NOT_ALLOWED', 'DELETE /v1/me (method not in the table)');
  t.equal(deleteMe.headers.allow, 'GET, HEAD');
  const putList = await admin.api.send('PUT', '/v1/requests');
  expectError(t, putList, 405, 'METHOD_NOT_ALLOWED', 'PUT /v1/requests');
  t.equal(putList.headers.allow, 'GET, HEAD, POST');
  // An unknown resource is the same code.
  expectError(t, await admin.api.get(`/v1/requests/${ABSENT.request}`), 404, 'NOT_FOUND', 'unknown request');
  expectError(t, await admin.api.get(`/v1/users/${ABSENT.user}`), 404, 'NOT_FOUND', 'unknown user');
  expectError(t, await admin.api.get(`/v1/events/${ABSENT.event}`), 404, 'NOT_FOUND', 'unknown event');
  expectError(
    t,
    await admin.api.get(`/v1/attachments/${ABSENT.attachment}`),
    404,
    'NOT_FOUND',
    'unknown attachment',
  );
  expectError(
    t,
    await admin.api.get(`/v1/groups/${ABSENT.group}/members`),
    404,
    'NOT_FOUND',
    'unknown group',
  );
});

t.test('the error envelope for every code the API answers with (429 in ratelimit.test)', async (t) => {
  // 400 VALIDATION_ERROR names the field
  const missing = await agent.api.post('/v1/requests', { description: 'no title', priority: 'low' });
  expectError(t, missing, 400, 'VALIDATION_ERROR', 'POST /v1/requests without title');
  t.match(missing.json?.error?.message, /title/, '400 message names the missing field (title)');
  const badEnum = await agent.api.post('/v1/requests', { title: 'x', description: 'y', priority: 'urgent' });
  expectError(t, badEnum, 400, 'VALIDATION_ERROR', 'priority outside the enum');
  t.match(badEnum.json?.error?.message, /priority/, '400 message names priority');
  const badLimit = await agent.api.get('/v1/requests?limit=0');
  expectError(t, badLimit, 400, 'VALIDATION_ERROR', 'limit=0');
  t.match(badLimit.json?.error?.message, /limit/, '400 message names limit');
  const badId = await agent.api.get('/v1/requests/not-an-id');
  expectError(t, badId, 404, 'NOT_FOUND', 'malformed request id (ids are opaque: 404 like an unknown one)');
  // 401 UNAUTHORIZED
  const anon = await stack.api(null).get('/v1/requests');
  expectError(t, anon, 401, 'UNAUTHORIZED', 'no credential');
  t.match(String(anon.headers['www-authenticate']), /^Bearer/, '401 carries WWW-Authenticate: Bearer');
  // 403 FORBIDDEN
  expectError(
    t,
    await viewer.api.post('/v1/requests', { title: 'a', description: 'b', priority: 'low' }),
    403,
    'FORBIDDEN',
    'viewer creates a request',
  );
  // 404 NOT_FOUND
  expectError(t, await agent.api.get(`/v1/requests/${ABSENT.request}`), 404, 'NOT_FOUND', 'unknown request');
  // 409 CONFLICT: duplicate email (case-insensitive)
  const u = await createUser(t, admin.api, { email: `dup.${stack.run}@example.com` });
  t.ok(u?.id, 'a user to duplicate');
  expectError(
    t,
    await admin.api.post('/v1/users', { email: `DUP.${stack.run}@example.com`, name: 'Dup', role: 'viewer' }),
    409,
    'CONFLICT',
    'duplicate email',
  );
  // 413 PAYLOAD_TOO_LARGE: JSON body over 1 MiB
  const big = await agent.api.post('/v1/requests', {
    title: 'big',
    description: 'x'.repeat(1_100_000),
    priority: 'low',
  });
  expectError(t, big, 413, 'PAYLOAD_TOO_LARGE', 'JSON body over 1 MiB');
  // 415 UNSUPPORTED_MEDIA_TYPE
  const plain = await agent.api.post('/v1/requests', undefined, {
    body: 'title=x',
    headers: { 'content-type': 'text/plain' },
  });
  expectError(t, plain, 415, 'UNSUPPORTED_MEDIA_TYPE', 'text/plain body');
});

t.test('Content-Type and Accept', async (t) => {
  const body = JSON.stringify({ title: 'Charset', description: 'json with charset', priority: 'low' });
  const withCharset = await agent.api.post('/v1/requests', undefined, {
    body,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  expectOk(t, withCharset, 201, 'application/json; charset=utf-8 accepted');
  const noType = await agent.api.post('/v1/requests', undefined, { body });
  expectError(t, noType, 415, 'UNSUPPORTED_MEDIA_TYPE', 'a body without Content-Type');
  const form = await agent.api.post('/v1/requests', undefined, {
    body: 'title=x&description=y&priority=low',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expectError(t, form, 415, 'UNSUPPORTED_MEDIA_TYPE', 'form-encoded body on a JSON route');
  const malformed = await agent.api.post('/v1/requests', undefined, {
    body: '{"title": "x",',
    headers: { 'content-type': 'application/json' },
  });
  expectError(t, malformed, 400, 'VALIDATION_ERROR', 'malformed JSON');

  for (const accept of ['application/json', '*/*', 'application/*', undefined]) {
    const res = await agent.api.get('/v1/requests', { headers: { accept } });
    expectOk(t, res, 200, `GET /v1/requests with Accept: ${accept ?? '(none)'}`);
    t.match(
      String(res.headers['content-type']),
      /^application\/json; charset=utf-8$/i,
      'application/json; charset=utf-8',
    );
  }
  // A client that asks for something else still never gets HTML: JSON data or a JSON error.
  const html = await agent.api.get('/v1/requests', { headers: { accept: 'text/html' } });
  t.match(String(html.headers['content-type']), /^application\/json/, 'Accept: text/html still answers JSON');
  t.ok(html.isJson && typeof html.json.success === 'boolean', 'Accept: text/html: an envelope');
  // x-request-id is returned (generated when absent, echoed when given)
  const rid = await agent.api.get('/v1/me', { headers: { 'x-request-id': `e2e-${stack.run}` } });
  t.equal(rid.headers['x-request-id'], `e2e-${stack.run}`, 'x-request-id echoed');
  t.ok((await agent.api.get('/v1/me')).headers['x-request-id'], 'x-request-id generated');
});

t.test("the spec's endpoint tables: every method + path is served through the gateway (2xx)", async (t) => {
  const spec = new Set(SPEC_ENDPOINTS.map((e) => `${e.method} /v1${e.path}`));
  const table = new Set(PUBLIC_ROUTES.map(routeKey));
  for (const key of spec) t.ok(table.has(key), `contracts route table lists the spec's ${key}`);
  for (const e of SPEC_OTHER_ENDPOINTS.filter((x) => x.path.startsWith('/v1'))) {
    t.ok(table.has(`${e.method} ${e.path}`), `contracts route table lists ${e.method} ${e.path}`);
  }

  // Real resources so every call can succeed.
  const group = await createGroup(t, admin.api);
  const spare = await createGroup(t, admin.api);
  const member = await createUser(t, admin.api, { role: 'agent' });
  const leaver = await createUser(t, admin.api);
  const req = await createRequest(t, agent.api, { assignedGroup: group.id });
  const doomed = await createRequest(t, agent.api);
  const up = await agent.api.upload(
    `/v1/requests/${req.id}/attachments`,
    'hello.txt',
    Buffer.from('hello\n'),
    'text/plain',
  );
  const attachment = expectOk(t, up, 201, 'upload for the attachment route');
  const event = await eventually(
    async () => (await admin.api.get('/v1/events?limit=1')).json?.data?.events?.[0],
    { what: 'a first event in the audit log' },
  ).catch(() => undefined);
  const ids: Record<string, string> = {
    id: '',
    userId: member.id,
  };
  const served = new Map<string, HttpResponse>();
  const call = async (
    method: string,
    path: string,
    params: Record<string, string>,
    send: () => Promise<HttpResponse>,
  ) => {
    const res = await send();
    served.set(`${method} ${path}`, res);
    t.ok(res.status >= 200 && res.status < 300, `${method} ${fill(path, params)} → ${res.status}`, {
      body: res.text.slice(0, 300),
    });
  };
  const a = admin.api;
  const P = (id: string) => ({ ...ids, id });
  await call('GET', '/v1/requests', {}, () => a.get('/v1/requests'));
  await call('POST', '/v1/requests', {}, () =>
    a.post('/v1/requests', { title: 't', description: 'd', priority: 'low' }),
  );
  await call('GET', '/v1/requests/:id', P(req.id), () => a.get(`/v1/requests/${req.id}`));
  await call('PATCH', '/v1/requests/:id', P(req.id), () =>
    a.patch(`/v1/requests/${req.id}`, { priority: 'high' }),
  );
  await call('POST', '/v1/requests/:id/comments', P(req.id), () =>
    a.post(`/v1/requests/${req.id}/comments`, { content: 'hi' }),
  );
  await call('GET', '/v1/requests/:id/comments', P(req.id), () => a.get(`/v1/requests/${req.id}/comments`));
  await call('POST', '/v1/requests/:id/attachments', P(req.id), () =>
    a.upload(`/v1/requests/${req.id}/attachments`, 'a.bin', Buffer.from([0, 1, 2, 3])),
  );
  if (attachment?.id) {
    await call('GET', '/v1/attachments/:id', P(attachment.id), () =>
      a.get(`/v1/attachments/${attachment.id}`),
    );
  }
  await call('GET', '/v1/requests/:id/events', P(req.id), () => a.get(`/v1/requests/${req.id}/events`));
  await call('DELETE', '/v1/requests/:id', P(doomed.id), () => a.delete(`/v1/requests/${doomed.id}`));
  await call('GET', '/v1/requests/deleted', {}, () => a.get('/v1/requests/deleted?limit=5'));
  await call('POST', '/v1/requests/:id/restore', P(doomed.id), () =>
    a.post(`/v1/requests/${doomed.id}/restore`),
  );
  const bulked = await createRequest(t, agent.api);
  await call('POST', '/v1/requests/bulk', {}, () =>
    a.post('/v1/requests/bulk', {
      action: 'update',
      items: [{ id: bulked.id }],
      changes: { priority: 'high' },
    }),
  );
  const job = String(served.get('POST /v1/requests/bulk')?.json?.data?.id);
  await call('GET', '/v1/jobs/:id', P(job), () => a.get(`/v1/jobs/${job}`));
  await call('GET', '/v1/requests/changes', {}, () => a.get('/v1/requests/changes?limit=5'));
  await call('GET', '/v1/users', {}, () => a.get('/v1/users'));
  await call('POST', '/v1/users', {}, () =>
    a.post('/v1/users', { email: `tbl.${stack.run}@example.com`, name: 'T', role: 'viewer' }),
  );
  await call('GET', '/v1/users/:id', P(member.id), () => a.get(`/v1/users/${member.id}`));
  await call('PATCH', '/v1/users/:id', P(member.id), () =>
    a.patch(`/v1/users/${member.id}`, { isVip: true }),
  );
  await call('DELETE', '/v1/users/:id', P(leaver.id), () => a.delete(`/v1/users/${leaver.id}`));
  await call('GET', '/v1/me', {}, () => a.get('/v1/me'));
  await call('GET', '/v1/groups', {}, () => a.get('/v1/groups'));
  await call('POST', '/v1/groups', {}, () =>
    a.post('/v1/groups', { name: `tbl ${stack.run}`, description: 'x' }),
  );
  await call('GET', '/v1/groups/:id', P(group.id), () => a.get(`/v1/groups/${group.id}`));
  await call('PATCH', '/v1/groups/:id', P(group.id), () =>
    a.patch(`/v1/groups/${group.id}`, { description: 'changed' }),
  );
  await call('GET', '/v1/groups/:id/members', P(group.id), () => a.get(`/v1/groups/${group.id}/members`));
  await call('POST', '/v1/groups/:id/members', P(group.id), () =>
    a.post(`/v1/groups/${group.id}/members`, { userId: member.id }),
  );
  await call('DELETE', '/v1/groups/:id/members/:userId', P(group.id), () =>
    a.delete(`/v1/groups/${group.id}/members/${member.id}`),
  );
  await call('DELETE', '/v1/groups/:id', P(spare.id), () => a.delete(`/v1/groups/${spare.id}`));
  await call('GET', '/v1/events', {}, () => a.get('/v1/events'));
  if (event?.id) await call('GET', '/v1/events/:id', P(event.id), () => a.get(`/v1/events/${event.id}`));
  await call('GET', '/v1/events/export', {}, () =>
    a.get('/v1/events/export?limit=1', { headers: { accept: 'application/x-ndjson' } }),
  );
  // SLA policies (matching only this file's group: other files' requests keep theirs).
  await call('POST', '/v1/sla-policies', {}, () =>
    a.post('/v1/sla-policies', {
      name: `tbl-${stack.run}`.toLowerCase().replace(/[^a-z0-9_-]/g, '-'),
      match: { groups: [group.id] },
      targets: Object.fromEntries(
        ['critical', 'high', 'medium', 'low'].map((p) => [
          p,
          { firstResponseMinutes: 30, resolutionMinutes: 240 },
        ]),
      ),
    }),
  );
  const policy = String(served.get('POST /v1/sla-policies')?.json?.data?.id);
  await call('GET', '/v1/sla-policies', {}, () => a.get('/v1/sla-policies'));
  await call('GET', '/v1/sla-policies/:id', P(policy), () => a.get(`/v1/sla-policies/${policy}`));
  await call('PATCH', '/v1/sla-policies/:id', P(policy), () =>
    a.patch(`/v1/sla-policies/${policy}`, { description: 'x' }),
  );
  await call('DELETE', '/v1/sla-policies/:id', P(policy), () => a.delete(`/v1/sla-policies/${policy}`));
  // Webhooks (to the discard port on loopback: nothing listens, every attempt fails at once).
  await call('POST', '/v1/webhooks', {}, () =>
    a.post('/v1/webhooks', { url: 'http://127.0.0.1:9/tbl', events: ['system.sync_completed'] }),
  );
  const hook = String(served.get('POST /v1/webhooks')?.json?.data?.id);
  await call('GET', '/v1/webhooks', {}, () => a.get('/v1/webhooks'));
  await call('GET', '/v1/webhooks/:id', P(hook), () => a.get(`/v1/webhooks/${hook}`));
  await call('PATCH', '/v1/webhooks/:id', P(hook), () =>
    a.patch(`/v1/webhooks/${hook}`, { description: 'x' }),
  );
  await call('POST', '/v1/webhooks/:id/rotate-secret', P(hook), () =>
    a.post(`/v1/webhooks/${hook}/rotate-secret`),
  );
  await call('POST', '/v1/webhooks/:id/ping', P(hook), () => a.post(`/v1/webhooks/${hook}/ping`));
  const ping = String(served.get('POST /v1/webhooks/:id/ping')?.json?.data?.id);
  await call('GET', '/v1/webhooks/:id/deliveries', P(hook), () => a.get(`/v1/webhooks/${hook}/deliveries`));
  await call('POST', '/v1/webhooks/:id/deliveries/:deliveryId/replay', { ...P(hook), deliveryId: ping }, () =>
    a.post(`/v1/webhooks/${hook}/deliveries/${ping}/replay`),
  );
  await call('DELETE', '/v1/webhooks/:id', P(hook), () => a.delete(`/v1/webhooks/${hook}`));

  // What those writes must have produced in the audit log (checked at the end of the file).
  ledger.record(req.id, 'request.created', 'request.priority_changed', 'request.comment_added');
  ledger.record(req.id, 'request.attachment_added', 'request.attachment_added');
  ledger.allow(req.id, 'request.assigned'); // created with a group
  ledger.record(doomed.id, 'request.created', 'request.deleted', 'request.restored');
  ledger.record(bulked.id, 'request.created', 'request.priority_changed');
  ledger.record(served.get('POST /v1/requests')?.json?.data?.id, 'request.created');
  ledger.record(served.get('POST /v1/users')?.json?.data?.id, 'user.created');
  ledger.record(member.id, 'user.created', 'user.updated', 'user.updated', 'user.updated'); // isVip, joined, left
  ledger.record(leaver.id, 'user.created', 'user.deactivated');
  ledger.record(policy, 'system.config_changed', 'system.config_changed', 'system.config_changed');
  for (const key of spec)
    t.ok(served.get(key) && served.get(key)!.status < 300, `spec endpoint served: ${key}`);
  for (const key of table)
    t.ok(served.get(key) && served.get(key)!.status < 300, `route table entry served: ${key}`);
  // Every success above is in the envelope (the download is the file itself, the export NDJSON).
  for (const [key, res] of served) {
    if (key === 'GET /v1/attachments/:id' || key === 'GET /v1/events/export' || res.status >= 300) continue;
    t.ok(res.isJson && res.json.success === true && 'data' in res.json, `${key}: success envelope`);
  }
  // The OAuth endpoints are served outside /v1 (the flows are in oauth.test).
  const authorize = await request(`${stack.origin}/oauth/authorize`);
  t.not(authorize.status, 404, 'GET /oauth/authorize is served (an error page without parameters, not 404)');
  const token = await request(`${stack.origin}/oauth/token`, {
    method: 'POST',
    body: 'grant_type=client_credentials',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.not(token.status, 404, 'POST /oauth/token is served');
  t.ok(
    token.isJson && typeof token.json.error === 'string',
    'token endpoint errors are RFC 6749 JSON ({error})',
  );
});

t.test('scope matrix: every public route × admin, agent, viewer key → allowed or 403', async (t) => {
  const sample: Record<string, string> = {
    id: ABSENT.request,
    userId: ABSENT.user,
    deliveryId: ABSENT.delivery,
  };
  const idFor = (path: string) => {
    if (path.startsWith('/v1/users')) return ABSENT.user;
    if (path.startsWith('/v1/groups')) return ABSENT.group;
    if (path.startsWith('/v1/events')) return ABSENT.event;
    if (path.startsWith('/v1/attachments')) return ABSENT.attachment;
    if (path.startsWith('/v1/webhooks')) return ABSENT.webhook;
    return ABSENT.request;
  };
  const allowedScopes = {
    admin: ['requests:read', 'requests:write', 'users:read', 'users:write', 'admin'],
    agent: ['requests:read', 'requests:write', 'users:read'],
    viewer: ['requests:read', 'users:read'],
  } as const;
  for (const actor of [admin, agent, viewer]) {
    for (const route of PUBLIC_ROUTES) {
      const path = fill(route.path, { ...sample, id: idFor(route.path) });
      // Bodies that can never write anything: empty objects fail validation (400) when allowed.
      const res = await actor.api.send(
        route.method,
        path,
        route.method === 'POST' || route.method === 'PATCH' ? { json: {} } : {},
      );
      const allowed =
        route.scope === 'authenticated' ||
        (allowedScopes[actor.role] as readonly string[]).includes(route.scope);
      if (allowed) {
        t.ok(
          ![401, 403].includes(res.status),
          `${actor.role}: ${route.method} ${route.path} allowed (${res.status})`,
        );
      } else {
        expectError(
          t,
          res,
          403,
          'FORBIDDEN',
          `${actor.role}: ${route.method} ${route.path} needs ${route.scope}`,
        );
      }
    }
  }
});

t.test('the public OpenAPI document lists exactly the public routes', async (t) => {
  const res = await request(`${stack.origin}/openapi.json`, { headers: { accept: 'application/json' } });
  t.equal(res.status, 200, 'GET /openapi.json');
  t.match(String(res.json?.openapi), /^3\.1\./, 'OpenAPI 3.1');
  const paths = res.json?.paths ?? {};
  const documented = new Set(
    Object.entries(paths).flatMap(([p, ops]) =>
      Object.keys(ops as object)
        .filter((m) => ['get', 'post', 'patch', 'delete', 'put'].includes(m))
        .map((m) => `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`),
    ),
  );
  for (const route of PUBLIC_ROUTES) t.ok(documented.has(routeKey(route)), `documented: ${routeKey(route)}`);
  const v1 = [...documented].filter((k) => k.split(' ')[1].startsWith('/v1/'));
  t.same(
    v1.filter((k) => !PUBLIC_ROUTES.some((r) => routeKey(r) === k)),
    [],
    'no /v1 operation beyond the route table',
  );
});

t.test('audit completeness: each write produced exactly its events; refused writes none', async (t) => {
  // Every refused or failed write of this file targeted these well-formed but absent ids.
  for (const id of Object.values(ABSENT)) ledger.none(id);
  await ledger.verify(t, admin.api);
});
