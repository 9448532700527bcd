import { Value } from 'typebox/value';
import t from 'tap';
import { fixtures } from '../src/fixtures.js';
import {
  CreateWebhookBody,
  CredentialNotice,
  DateTimeString,
  DomainEvent,
  EventEnvelope,
  isNoticeKind,
  NoticeEnvelope,
  EVENT_CATALOGUE,
  EVENT_TYPES,
  IDENTITY_RPC_REPLIES,
  WEBHOOKS_ADMIN_OPS,
  WEBHOOKS_ADMIN_REPLIES,
  WebhooksAdminEnvelope,
  REQUESTS_ADMIN_OPS,
  REQUESTS_ADMIN_REPLIES,
  RequestsAdminEnvelope,
  AdminRpcError,
  type IdentityRpcName,
  Principal,
  effectiveScopes,
  ERROR_STATUS,
  expandScopes,
  hasScope,
  ID_PREFIX,
  isId,
  natsNames,
  newId,
  PUBLIC_ROUTES,
  pageWindow,
  paginate,
  paginateEvents,
  PageQuery,
  ROLE_SCOPES,
  routeKey,
} from '../src/index.js';

t.test('ids carry their prefix, are unique and sort in creation order', async (t) => {
  const ids = Array.from({ length: 500 }, () => newId('request'));
  t.equal(new Set(ids).size, 500);
  t.same([...ids].sort(), ids, 'lexicographic order = creation order, even within one millisecond');
  t.ok(ids.every((id) => isId('request', id)));
  t.notOk(isId('user', ids[0]), 'a request id is not a user id');
  const earlier = newId('event', Date.UTC(2020, 0, 1));
  const later = newId('event', Date.UTC(2030, 0, 1));
  t.ok(earlier < later);
  t.match(newId('user'), /^usr_[0-9a-z]{26}$/);
  t.same(Object.values(ID_PREFIX).slice(0, 6), ['req', 'cmt', 'att', 'usr', 'grp', 'evt']);
});

t.test('role scopes and effective scopes', async (t) => {
  t.same(ROLE_SCOPES.agent, ['requests:read', 'requests:write', 'users:read']);
  t.same(ROLE_SCOPES.viewer, ['requests:read', 'users:read']);
  t.same(expandScopes(['admin']).length, 5, 'admin implies all five scopes');
  t.same(effectiveScopes(['admin'], 'agent'), ['requests:read', 'requests:write', 'users:read']);
  t.same(effectiveScopes(['requests:write', 'users:write'], 'viewer'), []);
  t.same(effectiveScopes(['requests:read', 'bogus'], 'admin'), ['requests:read']);
  t.ok(hasScope(['admin'], 'users:write'));
  t.notOk(hasScope(['users:read'], 'users:write'));
});

t.test("event catalogue has the 18 spec types and the trash's two with their resource types", async (t) => {
  t.equal(EVENT_TYPES.length, 20, "the 18 of the spec and the trash's two");
  t.equal(EVENT_CATALOGUE['system.sla_breach'], 'system');
  t.equal(EVENT_CATALOGUE['user.login'], 'user');
  t.equal(EVENT_CATALOGUE['request.assigned'], 'request');
  const event = {
    id: newId('event'),
    v: 1,
    type: 'request.assigned',
    resourceType: 'request',
    resourceId: newId('request'),
    actor: { id: newId('user'), name: 'A', email: 'a@example.com', role: 'agent' },
    changes: { assignedTo: { from: null, to: newId('user') } },
    metadata: { userAgent: 'curl', source: 'api', requestId: 'r1' },
    timestamp: new Date().toISOString(),
  };
  t.ok(Value.Check(DomainEvent, event), 'a well-formed event validates');
  t.notOk(Value.Check(DomainEvent, { ...event, type: 'request.exploded' }), 'unknown type is refused');
  t.notOk(Value.Check(DomainEvent, { ...event, id: 'nope' }), 'id must be an evt_ id');
  for (const source of ['scim', 'ldap']) {
    const provisioned = { ...event, metadata: { ...event.metadata, source } };
    t.ok(Value.Check(DomainEvent, provisioned), `source ${source} (identity provider connections) validates`);
    t.ok(Value.Check(EventEnvelope, provisioned), `the tolerant envelope takes source ${source}`);
  }
});

t.test('pagination clamps limit and computes pages and hasMore', async (t) => {
  t.same(pageWindow(1, 500), { page: 1, limit: 100, skip: 0 });
  t.same(pageWindow(3, 20), { page: 3, limit: 20, skip: 40 });
  t.same(paginate(pageWindow(1, 20), 41), { page: 1, limit: 20, total: 41, pages: 3 });
  t.equal(paginateEvents(pageWindow(2, 20), 40).hasMore, false, 'last full page has no more');
  t.equal(paginateEvents(pageWindow(2, 20), 41).hasMore, true);
  t.equal(paginate(pageWindow(1, 20), 0).pages, 0);
});

t.test('error codes map to their statuses', async (t) => {
  t.equal(ERROR_STATUS.UNAUTHORIZED, 401);
  t.equal(ERROR_STATUS.RATE_LIMITED, 429);
  t.equal(ERROR_STATUS.SERVICE_UNAVAILABLE, 503);
  t.equal(ERROR_STATUS.NOT_ACCEPTABLE, 406, 'the export refuses an Accept it cannot serve');
  t.equal(ERROR_STATUS.EXPECTATION_FAILED, 417, 'an Expect the gateway does not meet');
  t.equal(ERROR_STATUS.HEADERS_TOO_LARGE, 431, 'a request line and headers over the limit');
  t.equal(Object.keys(ERROR_STATUS).length, 16);
});

t.test('NATS names are namespaced', async (t) => {
  const n = natsNames('t1');
  t.equal(n.eventsStream, 'T1_EVENTS');
  t.equal(n.eventSubject('request.created'), 't1.events.request.created');
  t.equal(n.credentialNotices, 't1.notices.credentials');
});

t.test('route table is unique and covers the spec endpoints', async (t) => {
  const keys = PUBLIC_ROUTES.map(routeKey);
  t.equal(new Set(keys).size, keys.length, 'no duplicate routes');
  for (const k of [
    'GET /v1/requests',
    'DELETE /v1/requests/:id',
    'GET /v1/requests/:id/events',
    'GET /v1/me',
    'DELETE /v1/groups/:id/members/:userId',
    'GET /v1/events/:id',
  ]) {
    t.ok(keys.includes(k), k);
  }
  t.equal(PUBLIC_ROUTES.find((r) => r.path === '/v1/requests/:id/events')?.service, 'audit');
  t.equal(PUBLIC_ROUTES.find((r) => r.path === '/v1/events')?.bucket, 'events');
  const webhooks = PUBLIC_ROUTES.filter((r) => r.path.startsWith('/v1/webhooks'));
  t.equal(webhooks.length, 9, 'the webhooks routes');
  t.ok(
    webhooks.every((r) => r.service === 'webhooks' && r.scope === 'admin' && r.bucket === 'general'),
    'owned by webhooks, admin scope, the general bucket',
  );
});

t.test('a page number the store cannot skip to is refused by the schema', async (t) => {
  t.ok(Value.Check(PageQuery.page, 1));
  t.ok(Value.Check(PageQuery.page, 1_000_000));
  t.notOk(Value.Check(PageQuery.page, 1e300), '1e300 is an integer to JSON Schema, but not a page');
  t.notOk(Value.Check(PageQuery.page, 1_000_001));
  t.notOk(Value.Check(PageQuery.page, 0));
});

t.test("TypeBox's own checks take a date-time as the HTTP layer does (ajv-formats)", async (t) => {
  const at = DateTimeString();
  t.ok(Value.Check(at, '2026-11-25T09:30:00Z'));
  t.ok(Value.Check(at, '2026-11-25T09:30:00.123+01:00'));
  t.ok(Value.Check(at, '2026-11-25 09:30:00Z'), 'RFC 3339 allows a space for the T');
  t.notOk(Value.Check(at, '2026-11-25T09:30:00Z[Europe/Paris]'), 'no RFC 9557 suffix');
  t.notOk(Value.Check(at, '2026-11-25'), 'a date alone is no date-time');
  t.notOk(Value.Check(at, 'tomorrow'));
});

t.test('frozen fixtures: what this release writes, and what it must go on reading', async (t) => {
  const events = fixtures.events();
  for (const e of events.v1) {
    t.ok(Value.Check(DomainEvent, e), `v1 ${String(e.type)} is what producers write`);
    t.ok(Value.Check(EventEnvelope, e), `v1 ${String(e.type)} has the envelope`);
  }
  t.same(
    events.v1.map((e) => e.type),
    EVENT_TYPES,
    'one v1 example of every event type',
  );
  for (const e of events.snapshots) {
    t.ok(Value.Check(DomainEvent, e), `v1 ${String(e.type)} with a snapshot is what producers write`);
    t.ok(Value.Check(EventEnvelope, e), `v1 ${String(e.type)} with a snapshot has the envelope`);
    const { snapshot: _snapshot, ...older } = e;
    t.ok(Value.Check(DomainEvent, older), 'the snapshot is optional: v1 without it is still v1');
  }
  for (const e of [...events.unversioned, ...events.future]) {
    t.ok(
      Value.Check(EventEnvelope, e),
      `${String(e.type)} v${String(e.v ?? 'none')}: readers accept the envelope`,
    );
  }
  t.notOk(
    events.future.every((e) => Value.Check(DomainEvent, e)),
    'the future examples go beyond what this release writes (so they test tolerance)',
  );
  const notices = fixtures.notices();
  for (const n of notices.v1) t.ok(Value.Check(CredentialNotice, n), `v1 notice ${String(n.kind)}`);
  for (const n of [...notices.v1, ...notices.unversioned, ...notices.future]) {
    t.ok(Value.Check(NoticeEnvelope, n), `notice ${String(n.kind)} v${String(n.v ?? 'none')}: the envelope`);
  }
  t.notOk(isNoticeKind('session_revoked'), 'a kind from the future is recognisably unknown');
});

t.test('frozen RPC fixtures: every operation has requests and replies of every version', async (t) => {
  const rpc = fixtures.rpc();
  const operations = Object.keys(IDENTITY_RPC_REPLIES) as IdentityRpcName[];
  for (const version of ['v1', 'unversioned', 'future'] as const) {
    const { requests, replies } = rpc[version];
    t.same(Object.keys(requests).sort(), [...operations].sort(), `${version}: a request of every operation`);
    t.same(Object.keys(replies).sort(), [...operations].sort(), `${version}: a reply of every operation`);
    for (const name of operations) {
      const envelope = replies[name] as { v?: unknown; ok: unknown; reply: unknown };
      t.equal(envelope.ok, true, `${version} ${name}: an answer`);
      t.ok(Value.Check(IDENTITY_RPC_REPLIES[name], envelope.reply), `${version} ${name}: the reply is read`);
      t.equal(envelope.v, version === 'unversioned' ? undefined : version === 'v1' ? 1 : 2);
      t.equal(requests[name].v, version === 'unversioned' ? undefined : version === 'v1' ? 1 : 2);
    }
  }
  const user = rpc.v1.replies.getUser.reply as { user: Record<string, unknown> };
  const { name: _dropped, ...nameless } = user.user;
  t.notOk(
    Value.Check(IDENTITY_RPC_REPLIES.getUser, { found: true, user: nameless }),
    'a reply without a field callers read is refused',
  );
  t.notOk(Value.Check(IDENTITY_RPC_REPLIES.getSettings, { globalAllowlist: 'all' }), 'or with a wrong type');
});

t.test('frozen webhooks admin fixtures: every op, both versions, read by the tolerant schemas', async (t) => {
  const frozen = fixtures.webhooksAdmin();
  for (const version of ['v1', 'future'] as const) {
    const { requests, replies } = frozen[version];
    t.same(Object.keys(requests).sort(), [...WEBHOOKS_ADMIN_OPS].sort(), `${version}: a request of every op`);
    t.same(Object.keys(replies).sort(), [...WEBHOOKS_ADMIN_OPS].sort(), `${version}: a reply of every op`);
    for (const op of WEBHOOKS_ADMIN_OPS) {
      t.ok(Value.Check(WebhooksAdminEnvelope, requests[op]), `${version} ${op}: the envelope is read`);
      t.equal(requests[op].op, op);
      const envelope = replies[op] as { ok: unknown; reply: unknown };
      t.equal(envelope.ok, true);
      t.ok(Value.Check(WEBHOOKS_ADMIN_REPLIES[op], envelope.reply), `${version} ${op}: the reply is read`);
    }
  }
  for (const reply of Object.values(frozen.v1.errors))
    t.ok(Value.Check(AdminRpcError, (reply as { reply: unknown }).reply), 'a refusal is read');
  const { webhook } = frozen.v1.replies.get.reply as { webhook: Record<string, unknown> };
  const { url: _dropped, ...urlless } = webhook;
  t.notOk(
    Value.Check(WEBHOOKS_ADMIN_REPLIES.get, { ok: true, webhook: urlless }),
    'a reply without a read field is refused',
  );
});

t.test('frozen requests admin fixtures: every op, both versions, read by the tolerant schemas', async (t) => {
  const frozen = fixtures.requestsAdmin();
  for (const version of ['v1', 'future'] as const) {
    const { requests, replies } = frozen[version];
    t.same(Object.keys(requests).sort(), [...REQUESTS_ADMIN_OPS].sort(), `${version}: a request of every op`);
    t.same(Object.keys(replies).sort(), [...REQUESTS_ADMIN_OPS].sort(), `${version}: a reply of every op`);
    for (const op of REQUESTS_ADMIN_OPS) {
      t.ok(Value.Check(RequestsAdminEnvelope, requests[op]), `${version} ${op}: the envelope is read`);
      t.equal(requests[op].op, op);
      const envelope = replies[op] as { ok: unknown; reply: unknown };
      t.equal(envelope.ok, true);
      t.ok(Value.Check(REQUESTS_ADMIN_REPLIES[op], envelope.reply), `${version} ${op}: the reply is read`);
    }
  }
  for (const reply of Object.values(frozen.v1.errors))
    t.ok(Value.Check(AdminRpcError, (reply as { reply: unknown }).reply), 'a refusal is read');
  const { policy } = frozen.v1.replies['slaPolicies.get'].reply as { policy: Record<string, unknown> };
  const { targets: _dropped, ...targetless } = policy;
  t.notOk(
    Value.Check(REQUESTS_ADMIN_REPLIES['slaPolicies.get'], { ok: true, policy: targetless }),
    'a reply without a read field is refused',
  );
});

t.test('frozen principal fixtures: v1 is what the gateway signs; the future goes beyond', async (t) => {
  const principal = fixtures.principal();
  t.ok(Value.Check(Principal, principal.v1.p), 'v1: the principal this release asserts');
  t.equal(principal.v1.v, 1);
  t.notOk('v' in principal.unversioned, 'unversioned: as gateways signed before versions existed');
  t.notOk(Value.Check(Principal, principal.future.p), 'future: fields this release does not know');
});

t.test('a webhook body states what the service takes: its URLs and its event patterns', async (t) => {
  // A generator (or a client) reads the schema: every URL its pattern allows must be one the
  // service parses (`new URL`, no credentials), and the event patterns are exactly the service's.
  const pattern = new RegExp(String((CreateWebhookBody.properties.url as { pattern?: string }).pattern), 'u');
  const takes = [
    'https://hooks.example.com/support-desk',
    'http://127.0.0.1:8080/hook?x=1',
    'http://[::1]:9000/',
    'https://[2001:db8::8a2e:370:7334]/h',
    'http://a/',
    'https://sub.example.com./p/ünïcode',
  ];
  for (const url of takes) {
    t.ok(pattern.test(url), `takes ${url}`);
    t.doesNotThrow(() => new URL(url), `${url} parses`);
  }
  const refuses = [
    'http://xn--a/', // Punycode that does not decode
    'http://1.2.3.999/', // a numeric last label read as IPv4
    'http://999/',
    'http://host:99999/',
    'http://user:pass@host/',
    'http://\u00b3x/',
    'http://a b/',
    'http://[:::1]/',
    'ftp://host/',
    'https://host/hook#fragment', // never sent to the receiver
    'http://host/\ufeff',
    'http://host/\u001c',
  ];
  for (const url of refuses) t.notOk(pattern.test(url), `refuses ${JSON.stringify(url)}`);

  t.same(
    [...((CreateWebhookBody.properties.events.items as { enum?: string[] }).enum ?? [])].sort(),
    ['*', 'request.*', 'user.*', 'system.*', ...EVENT_TYPES].sort(),
    'the event patterns: everything, a family, or a type of the catalogue',
  );
});
