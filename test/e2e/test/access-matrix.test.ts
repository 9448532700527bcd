// The regression net for authorisation: every public route × role (admin, agent, viewer, no
// credential) × whose object it is (the caller's own, another user's, a deleted one, one with an
// internal note), through the gateway on the real stack. Each cell names the status it must
// answer; a route added to PUBLIC_ROUTES without its row here fails the first test.
import { PUBLIC_ROUTES } from '@support-desk/contracts';
import t, { type Test } from 'tap';
import { type Actor, cast, createActor } from '../src/actors.js';
import type { Api, HttpResponse, Json } from '../src/http.js';
import { eventually, startStack } from '../src/stack.js';

type Role = 'admin' | 'agent' | 'viewer' | 'none';
type Ownership = 'own' | 'other' | 'deleted' | 'internal';
const ROLES: Role[] = ['admin', 'agent', 'viewer', 'none'];

/** One call: where it goes and what it sends (made fresh when the call changes its object). */
interface Call {
  path: string;
  json?: unknown;
  upload?: boolean;
}

interface Row {
  /** `"<METHOD> <path>"` of PUBLIC_ROUTES. */
  route: string;
  /** Per ownership: the call for a role (null: the cell does not exist, e.g. a viewer's own request). */
  cells: Partial<
    Record<Ownership, { call: (role: Role) => Promise<Call | null>; expect: Record<Role, number> }>
  >;
}

const stack = await startStack(t);
const { admin, agent, viewer } = await cast(stack);
const other = await createActor(stack, 'agent', 'other-agent');
const actors: Record<Exclude<Role, 'none'>, Actor> = { admin, agent, viewer };
const apiOf = (role: Role): Api => (role === 'none' ? admin.api.as(null) : actors[role].api);
const data = (res: HttpResponse, what: string): Json => {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.json.data;
};

const newRequest = async (by: Actor) =>
  data(
    await by.api.post('/v1/requests', { title: 'Matrix', description: 'Access matrix', priority: 'low' }),
    'create request',
  ).id as string;
const deletedRequest = async () => {
  const id = await newRequest(other);
  data(await admin.api.delete(`/v1/requests/${id}`), 'delete request');
  return id;
};
const attachmentOn = async (requestId: string) =>
  data(
    await admin.api.upload(`/v1/requests/${requestId}/attachments`, 'a.txt', Buffer.from('matrix')),
    'upload',
  ).id as string;

// The shared objects: read-only cells use them; cells that change their object make a fresh one.
const ownRequests: Partial<Record<Role, string>> = {
  admin: await newRequest(admin),
  agent: await newRequest(agent),
};
const othersRequest = await newRequest(other);
const withNote = await newRequest(other);
/** An internal note's text: no answer to a role that may not see it contains it. */
const NOTE = 'matrix internal note, staff only';
data(await admin.api.post(`/v1/requests/${withNote}/comments`, { content: NOTE, isInternal: true }), 'note');
const ownAttachments: Partial<Record<Role, string>> = {
  admin: await attachmentOn(ownRequests.admin!),
  agent: await attachmentOn(ownRequests.agent!),
};
const othersAttachment = await attachmentOn(othersRequest);
const requestToDelete = await newRequest(other);
const deletedAttachment = await attachmentOn(requestToDelete);
data(await admin.api.delete(`/v1/requests/${requestToDelete}`), 'delete request');
const deletedReq = await deletedRequest();

const newUser = async () =>
  data(
    await admin.api.post('/v1/users', {
      email: `matrix.${Math.random().toString(36).slice(2)}@example.com`,
      name: 'Matrix',
      role: 'viewer',
    }),
    'create user',
  ).id as string;
const deactivatedUser = await newUser();
data(await admin.api.delete(`/v1/users/${deactivatedUser}`), 'deactivate');
const newGroup = async () =>
  data(await admin.api.post('/v1/groups', { name: `matrix-${Math.random().toString(36).slice(2)}` }), 'group')
    .id as string;
const group = await newGroup();
const deletedGroup = await newGroup();
data(await admin.api.delete(`/v1/groups/${deletedGroup}`), 'delete group');
const groupWithMember = async () => {
  const id = await newGroup();
  data(await admin.api.post(`/v1/groups/${id}/members`, { userId: other.id }), 'add member');
  return id;
};
const someEvent = await eventually(
  async () => {
    const res = await admin.api.get('/v1/events?limit=1');
    return res.json?.data?.events?.[0]?.id as string | undefined;
  },
  { what: 'an audit event' },
);

// A webhook whose deliveries go nowhere (the discard port on loopback, refused at once).
const WEBHOOK = { url: 'http://127.0.0.1:9/matrix', events: ['system.sync_completed'] };
const newWebhook = async () =>
  data(await admin.api.post('/v1/webhooks', WEBHOOK), 'create webhook').id as string;
const webhook = await newWebhook();
const delivery = data(await admin.api.post(`/v1/webhooks/${webhook}/ping`, {}), 'ping').id as string;

// SLA policies that match only this file's own group, so requests of other files on a shared
// stack keep theirs.
const policyBody = () => ({
  name: `matrix-${Math.random().toString(36).slice(2)}`,
  match: { groups: [group] },
  targets: Object.fromEntries(
    ['critical', 'high', 'medium', 'low'].map((p) => [
      p,
      { firstResponseMinutes: 60, resolutionMinutes: 480 },
    ]),
  ),
});
const newPolicy = async () =>
  data(await admin.api.post('/v1/sla-policies', policyBody()), 'create SLA policy').id as string;
const slaPolicy = await newPolicy();
const deletedPolicy = await newPolicy();
data(await admin.api.delete(`/v1/sla-policies/${deletedPolicy}`), 'delete SLA policy');

/** A bulk job by `by`, changing one request of theirs. */
const bulkBody = (id: string) => ({ action: 'update', items: [{ id }], changes: { priority: 'high' } });
const jobOf = async (by: Actor) =>
  data(await by.api.post('/v1/requests/bulk', bulkBody(await newRequest(by))), 'bulk job').id as string;
const ownJobs: Partial<Record<Role, string>> = { admin: await jobOf(admin), agent: await jobOf(agent) };
const othersJob = await jobOf(other);

const is = (admin: number, agent: number, viewer: number) => ({ admin, agent, viewer, none: 401 });
const fixed = (call: Call) => async () => call;
const ownRequest = (build: (id: string) => Call) => async (role: Role) => {
  const id = role === 'viewer' ? null : role === 'none' ? ownRequests.agent! : ownRequests[role]!;
  return id ? build(id) : null;
};
const freshOwn = (build: (id: string) => Call) => async (role: Role) =>
  role === 'viewer' ? null : build(await newRequest(role === 'none' ? agent : actors[role]));
const freshOthers = (build: (id: string) => Call) => async () => build(await newRequest(other));
const selfId = (role: Role) => (role === 'none' ? agent.id : actors[role].id);
const patch = { priority: 'high' };
const comment = { content: 'matrix comment' };

const ROWS: Row[] = [
  {
    route: 'GET /v1/requests',
    // List items carry no comments, so there is no internal-note cell; deleted requests are
    // absent from every role's list (checked below), the live ones present. The list is the
    // other agent's requests: this file's own, on a stack other files share.
    cells: {
      other: { call: fixed({ path: '/v1/requests' }), expect: is(200, 200, 200) },
      deleted: {
        call: fixed({ path: `/v1/requests?requester=${other.id}&limit=100` }),
        expect: is(200, 200, 200),
      },
    },
  },
  {
    route: 'GET /v1/requests/changes',
    cells: { other: { call: fixed({ path: '/v1/requests/changes?limit=5' }), expect: is(200, 200, 200) } },
  },
  {
    route: 'GET /v1/requests/deleted',
    // The trash is the administrator's alone.
    cells: { deleted: { call: fixed({ path: '/v1/requests/deleted?limit=5' }), expect: is(200, 403, 403) } },
  },
  {
    route: 'POST /v1/requests/bulk',
    cells: {
      own: {
        call: ownRequest((id) => ({ path: '/v1/requests/bulk', json: bulkBody(id) })),
        expect: is(202, 202, 403),
      },
      other: {
        call: fixed({ path: '/v1/requests/bulk', json: bulkBody(othersRequest) }),
        expect: is(202, 202, 403),
      },
    },
  },
  {
    route: 'GET /v1/jobs/:id',
    // A job is its caller's and the administrators' (404 to anyone else, like an unknown one).
    cells: {
      own: {
        call: async (role) =>
          role === 'viewer' ? null : { path: `/v1/jobs/${ownJobs[role === 'none' ? 'agent' : role]}` },
        expect: is(200, 200, 200),
      },
      other: { call: fixed({ path: `/v1/jobs/${othersJob}` }), expect: is(200, 404, 404) },
    },
  },
  {
    route: 'POST /v1/requests/:id/restore',
    cells: {
      other: {
        call: fixed({ path: `/v1/requests/${othersRequest}/restore` }),
        expect: is(409, 403, 403),
      },
      deleted: {
        call: async () => ({ path: `/v1/requests/${await deletedRequest()}/restore` }),
        expect: is(200, 403, 403),
      },
    },
  },
  {
    route: 'POST /v1/requests',
    cells: {
      own: {
        call: fixed({ path: '/v1/requests', json: { title: 'M', description: 'M', priority: 'low' } }),
        expect: is(201, 201, 403),
      },
    },
  },
  {
    route: 'GET /v1/requests/:id',
    cells: {
      own: { call: ownRequest((id) => ({ path: `/v1/requests/${id}` })), expect: is(200, 200, 200) },
      other: { call: fixed({ path: `/v1/requests/${othersRequest}` }), expect: is(200, 200, 200) },
      deleted: { call: fixed({ path: `/v1/requests/${deletedReq}` }), expect: is(404, 404, 404) },
      internal: { call: fixed({ path: `/v1/requests/${withNote}` }), expect: is(200, 200, 200) },
    },
  },
  {
    route: 'PATCH /v1/requests/:id',
    cells: {
      own: {
        call: ownRequest((id) => ({ path: `/v1/requests/${id}`, json: patch })),
        expect: is(200, 200, 403),
      },
      other: {
        call: fixed({ path: `/v1/requests/${othersRequest}`, json: patch }),
        expect: is(200, 200, 403),
      },
      deleted: {
        call: fixed({ path: `/v1/requests/${deletedReq}`, json: patch }),
        expect: is(404, 404, 403),
      },
    },
  },
  {
    route: 'DELETE /v1/requests/:id',
    cells: {
      own: { call: freshOwn((id) => ({ path: `/v1/requests/${id}` })), expect: is(200, 403, 403) },
      other: { call: freshOthers((id) => ({ path: `/v1/requests/${id}` })), expect: is(200, 403, 403) },
      deleted: { call: fixed({ path: `/v1/requests/${deletedReq}` }), expect: is(404, 403, 403) },
    },
  },
  {
    route: 'POST /v1/requests/:id/comments',
    cells: {
      own: {
        call: ownRequest((id) => ({ path: `/v1/requests/${id}/comments`, json: comment })),
        expect: is(201, 201, 403),
      },
      other: {
        call: fixed({ path: `/v1/requests/${othersRequest}/comments`, json: comment }),
        expect: is(201, 201, 403),
      },
      deleted: {
        call: fixed({ path: `/v1/requests/${deletedReq}/comments`, json: comment }),
        expect: is(404, 404, 403),
      },
      internal: {
        call: fixed({
          path: `/v1/requests/${othersRequest}/comments`,
          json: { ...comment, isInternal: true },
        }),
        expect: is(201, 201, 403),
      },
    },
  },
  {
    route: 'GET /v1/requests/:id/comments',
    cells: {
      own: { call: ownRequest((id) => ({ path: `/v1/requests/${id}/comments` })), expect: is(200, 200, 200) },
      other: { call: fixed({ path: `/v1/requests/${othersRequest}/comments` }), expect: is(200, 200, 200) },
      deleted: { call: fixed({ path: `/v1/requests/${deletedReq}/comments` }), expect: is(404, 404, 404) },
      internal: { call: fixed({ path: `/v1/requests/${withNote}/comments` }), expect: is(200, 200, 200) },
    },
  },
  {
    route: 'POST /v1/requests/:id/attachments',
    cells: {
      own: {
        call: ownRequest((id) => ({ path: `/v1/requests/${id}/attachments`, upload: true })),
        expect: is(201, 201, 403),
      },
      other: {
        call: fixed({ path: `/v1/requests/${othersRequest}/attachments`, upload: true }),
        expect: is(201, 201, 403),
      },
      deleted: {
        call: fixed({ path: `/v1/requests/${deletedReq}/attachments`, upload: true }),
        expect: is(404, 404, 403),
      },
    },
  },
  {
    route: 'GET /v1/attachments/:id',
    cells: {
      own: {
        call: async (role) =>
          role === 'viewer'
            ? null
            : { path: `/v1/attachments/${ownAttachments[role === 'none' ? 'agent' : role]}` },
        expect: is(200, 200, 200),
      },
      other: { call: fixed({ path: `/v1/attachments/${othersAttachment}` }), expect: is(200, 200, 200) },
      deleted: { call: fixed({ path: `/v1/attachments/${deletedAttachment}` }), expect: is(404, 404, 404) },
    },
  },
  {
    route: 'GET /v1/requests/:id/events',
    cells: {
      own: { call: ownRequest((id) => ({ path: `/v1/requests/${id}/events` })), expect: is(200, 200, 200) },
      other: { call: fixed({ path: `/v1/requests/${othersRequest}/events` }), expect: is(200, 200, 200) },
      // A deleted request's history is the administrator's alone.
      deleted: { call: fixed({ path: `/v1/requests/${deletedReq}/events` }), expect: is(200, 404, 404) },
      internal: { call: fixed({ path: `/v1/requests/${withNote}/events` }), expect: is(200, 200, 200) },
    },
  },
  {
    route: 'GET /v1/users',
    cells: { other: { call: fixed({ path: '/v1/users' }), expect: is(200, 200, 200) } },
  },
  {
    route: 'POST /v1/users',
    cells: {
      other: {
        call: async () => ({
          path: '/v1/users',
          json: { email: `m.${Math.random().toString(36).slice(2)}@example.com`, name: 'M', role: 'viewer' },
        }),
        expect: is(201, 403, 403),
      },
    },
  },
  {
    route: 'GET /v1/users/:id',
    cells: {
      own: { call: async (role) => ({ path: `/v1/users/${selfId(role)}` }), expect: is(200, 200, 200) },
      other: { call: fixed({ path: `/v1/users/${other.id}` }), expect: is(200, 200, 200) },
      deleted: { call: fixed({ path: `/v1/users/${deactivatedUser}` }), expect: is(200, 200, 200) },
    },
  },
  {
    route: 'PATCH /v1/users/:id',
    cells: {
      own: {
        call: async (role) => ({ path: `/v1/users/${selfId(role)}`, json: { name: 'Self' } }),
        expect: is(200, 403, 403),
      },
      other: {
        call: fixed({ path: `/v1/users/${other.id}`, json: { name: 'Other' } }),
        expect: is(200, 403, 403),
      },
      deleted: {
        call: fixed({ path: `/v1/users/${deactivatedUser}`, json: { name: 'Gone' } }),
        expect: is(200, 403, 403),
      },
    },
  },
  {
    route: 'DELETE /v1/users/:id',
    cells: {
      other: { call: async () => ({ path: `/v1/users/${await newUser()}` }), expect: is(200, 403, 403) },
    },
  },
  { route: 'GET /v1/me', cells: { own: { call: fixed({ path: '/v1/me' }), expect: is(200, 200, 200) } } },
  {
    route: 'GET /v1/groups',
    cells: { other: { call: fixed({ path: '/v1/groups' }), expect: is(200, 200, 200) } },
  },
  {
    route: 'POST /v1/groups',
    cells: {
      other: {
        call: async () => ({
          path: '/v1/groups',
          json: { name: `m-${Math.random().toString(36).slice(2)}` },
        }),
        expect: is(201, 403, 403),
      },
    },
  },
  {
    route: 'GET /v1/groups/:id',
    cells: {
      other: { call: fixed({ path: `/v1/groups/${group}` }), expect: is(200, 200, 200) },
      deleted: { call: fixed({ path: `/v1/groups/${deletedGroup}` }), expect: is(404, 404, 404) },
    },
  },
  {
    route: 'PATCH /v1/groups/:id',
    cells: {
      other: {
        call: fixed({ path: `/v1/groups/${group}`, json: { description: 'd' } }),
        expect: is(200, 403, 403),
      },
      deleted: {
        call: fixed({ path: `/v1/groups/${deletedGroup}`, json: { description: 'd' } }),
        expect: is(404, 403, 403),
      },
    },
  },
  {
    route: 'DELETE /v1/groups/:id',
    cells: {
      other: { call: async () => ({ path: `/v1/groups/${await newGroup()}` }), expect: is(200, 403, 403) },
      deleted: { call: fixed({ path: `/v1/groups/${deletedGroup}` }), expect: is(404, 403, 403) },
    },
  },
  {
    route: 'GET /v1/groups/:id/members',
    cells: {
      other: { call: fixed({ path: `/v1/groups/${group}/members` }), expect: is(200, 200, 200) },
      deleted: { call: fixed({ path: `/v1/groups/${deletedGroup}/members` }), expect: is(404, 404, 404) },
    },
  },
  {
    route: 'POST /v1/groups/:id/members',
    cells: {
      other: {
        call: fixed({ path: `/v1/groups/${group}/members`, json: { userId: other.id } }),
        expect: is(200, 403, 403),
      },
      deleted: {
        call: fixed({ path: `/v1/groups/${deletedGroup}/members`, json: { userId: other.id } }),
        expect: is(404, 403, 403),
      },
    },
  },
  {
    route: 'DELETE /v1/groups/:id/members/:userId',
    cells: {
      other: {
        call: async () => ({ path: `/v1/groups/${await groupWithMember()}/members/${other.id}` }),
        expect: is(200, 403, 403),
      },
      deleted: {
        call: fixed({ path: `/v1/groups/${deletedGroup}/members/${other.id}` }),
        expect: is(404, 403, 403),
      },
    },
  },
  {
    route: 'GET /v1/events',
    cells: { other: { call: fixed({ path: '/v1/events' }), expect: is(200, 403, 403) } },
  },
  {
    route: 'GET /v1/events/export',
    // The matrix's client asks for JSON: the admin passes authorization and is then told the export
    // is NDJSON only (406); the others are refused before that (403). export.test reads it whole.
    cells: { other: { call: fixed({ path: '/v1/events/export?limit=1' }), expect: is(406, 403, 403) } },
  },
  {
    route: 'GET /v1/events/:id',
    cells: { other: { call: fixed({ path: `/v1/events/${someEvent}` }), expect: is(200, 403, 403) } },
  },
  {
    route: 'GET /v1/sla-policies',
    cells: { other: { call: fixed({ path: '/v1/sla-policies' }), expect: is(200, 200, 200) } },
  },
  {
    route: 'POST /v1/sla-policies',
    cells: {
      other: {
        call: async () => ({ path: '/v1/sla-policies', json: policyBody() }),
        expect: is(201, 403, 403),
      },
    },
  },
  {
    route: 'GET /v1/sla-policies/:id',
    cells: {
      other: { call: fixed({ path: `/v1/sla-policies/${slaPolicy}` }), expect: is(200, 200, 200) },
      deleted: { call: fixed({ path: `/v1/sla-policies/${deletedPolicy}` }), expect: is(404, 404, 404) },
    },
  },
  {
    route: 'PATCH /v1/sla-policies/:id',
    cells: {
      other: {
        call: fixed({
          path: `/v1/sla-policies/${slaPolicy}`,
          json: { pauseStatuses: ['pending', 'assigned'] },
        }),
        expect: is(200, 403, 403),
      },
      deleted: {
        call: fixed({ path: `/v1/sla-policies/${deletedPolicy}`, json: { position: 5 } }),
        expect: is(404, 403, 403),
      },
    },
  },
  {
    route: 'DELETE /v1/sla-policies/:id',
    cells: {
      other: {
        call: async () => ({ path: `/v1/sla-policies/${await newPolicy()}` }),
        expect: is(200, 403, 403),
      },
      deleted: { call: fixed({ path: `/v1/sla-policies/${deletedPolicy}` }), expect: is(404, 403, 403) },
    },
  },
  {
    route: 'GET /v1/webhooks',
    cells: { other: { call: fixed({ path: '/v1/webhooks' }), expect: is(200, 403, 403) } },
  },
  {
    route: 'POST /v1/webhooks',
    cells: { other: { call: fixed({ path: '/v1/webhooks', json: WEBHOOK }), expect: is(201, 403, 403) } },
  },
  {
    route: 'GET /v1/webhooks/:id',
    cells: { other: { call: fixed({ path: `/v1/webhooks/${webhook}` }), expect: is(200, 403, 403) } },
  },
  {
    route: 'PATCH /v1/webhooks/:id',
    cells: {
      other: {
        call: fixed({ path: `/v1/webhooks/${webhook}`, json: { description: 'matrix' } }),
        expect: is(200, 403, 403),
      },
    },
  },
  {
    route: 'DELETE /v1/webhooks/:id',
    cells: {
      other: {
        call: async () => ({ path: `/v1/webhooks/${await newWebhook()}` }),
        expect: is(200, 403, 403),
      },
    },
  },
  {
    route: 'POST /v1/webhooks/:id/rotate-secret',
    cells: {
      other: { call: fixed({ path: `/v1/webhooks/${webhook}/rotate-secret` }), expect: is(200, 403, 403) },
    },
  },
  {
    route: 'POST /v1/webhooks/:id/ping',
    cells: { other: { call: fixed({ path: `/v1/webhooks/${webhook}/ping` }), expect: is(202, 403, 403) } },
  },
  {
    route: 'GET /v1/webhooks/:id/deliveries',
    cells: {
      other: { call: fixed({ path: `/v1/webhooks/${webhook}/deliveries` }), expect: is(200, 403, 403) },
    },
  },
  {
    route: 'POST /v1/webhooks/:id/deliveries/:deliveryId/replay',
    cells: {
      other: {
        call: fixed({ path: `/v1/webhooks/${webhook}/deliveries/${delivery}/replay` }),
        expect: is(202, 403, 403),
      },
    },
  },
];

t.test('every public route has its row, and no row names a route that does not exist', async (t) => {
  const routes = PUBLIC_ROUTES.map((r) => `${r.method} ${r.path}`).sort();
  t.same(ROWS.map((r) => r.route).sort(), routes);
});

for (const row of ROWS) {
  const [method] = row.route.split(' ');
  t.test(row.route, async (t) => {
    for (const [ownership, cell] of Object.entries(row.cells)) {
      for (const role of ROLES) {
        const call = await cell.call(role);
        if (!call) continue;
        const api = apiOf(role);
        const res = call.upload
          ? await api.upload(call.path, 'm.txt', Buffer.from('matrix'))
          : await api.send(method, call.path, call.json === undefined ? {} : { json: call.json });
        t.equal(
          res.status,
          cell.expect[role],
          `${role} × ${ownership}: ${res.status} ${res.status >= 400 ? res.text : ''}`,
        );
        if (res.status === 200) checkBody(t, row.route, ownership as Ownership, role, res);
      }
    }
  });
}

// The role columns above use each role's full key; a narrower key of an administrator is its own
// case: `users:write` (an HR-sync app, a scoped key) manages agents and viewers, never admins.
t.test(
  'users:write × admins: creating, promoting, changing or deactivating one needs the admin scope',
  async (t) => {
    const hr = await createActor(stack, 'admin', 'hr-sync', { scopes: ['users:read', 'users:write'] });
    const target = await createActor(stack, 'admin', 'hr-target');
    const viewerId = await newUser();
    const cells: [string, string, string, unknown, number][] = [
      [
        'create an admin',
        'POST',
        '/v1/users',
        { email: `hr.${Date.now()}@example.com`, name: 'H', role: 'admin' },
        403,
      ],
      ['promote a viewer', 'PATCH', `/v1/users/${viewerId}`, { role: 'admin' }, 403],
      ['change an admin', 'PATCH', `/v1/users/${target.id}`, { name: 'Renamed' }, 403],
      ['demote an admin', 'PATCH', `/v1/users/${target.id}`, { role: 'viewer' }, 403],
      ['deactivate an admin', 'DELETE', `/v1/users/${target.id}`, undefined, 403],
      ["an admin's groups", 'POST', `/v1/groups/${group}/members`, { userId: target.id }, 403],
      ['change a viewer', 'PATCH', `/v1/users/${viewerId}`, { role: 'agent' }, 200],
      ['deactivate an agent', 'DELETE', `/v1/users/${viewerId}`, undefined, 200],
    ];
    for (const [what, method, path, json, status] of cells) {
      const res = await hr.api.send(method, path, json === undefined ? {} : { json });
      t.equal(
        res.status,
        status,
        `users:write × ${what}: ${res.status} ${res.status >= 400 ? res.text : ''}`,
      );
    }
    const me = await target.api.get('/v1/me');
    t.match(me.json.data, { role: 'admin', status: 'active' }, 'the admin is untouched and can still call');
  },
);

/** What a 200 may show: deleted requests never listed, internal notes only to staff. */
function checkBody(t: Test, route: string, ownership: Ownership, role: Role, res: HttpResponse) {
  if (route === 'GET /v1/requests' && ownership === 'deleted') {
    const { requests, pagination } = res.json.data as { requests: { id: string }[]; pagination: Json };
    t.ok(pagination.total <= 100, `${role} × deleted: the whole list is on this page`);
    const ids = requests.map((r) => r.id);
    t.notOk(ids.includes(deletedReq) || ids.includes(requestToDelete), `${role} × deleted: not listed`);
    t.ok(ids.includes(othersRequest), `${role} × deleted: a live request is`);
  }
  if (ownership !== 'internal') return;
  const staff = role === 'admin' || role === 'agent';
  if (route === 'GET /v1/requests/:id' || route === 'GET /v1/requests/:id/comments') {
    const notes = (res.json.data.comments as { isInternal: boolean }[]).filter((c) => c.isInternal);
    t.equal(notes.length, staff ? 1 : 0, `${role} × internal: the note is seen only by staff`);
    t.equal(res.text.includes(NOTE), staff, `${role} × internal: its text only to staff`);
  }
  if (route === 'GET /v1/requests/:id/events') {
    // The audit log is readable more widely than notes: the event says a note was added, never what.
    const events = res.json.data.events as { type: string; changes?: Json }[];
    t.ok(
      events.some((e) => e.type === 'request.comment_added' && e.changes?.comment?.to?.isInternal === true),
      `${role} × internal: the note's event is listed`,
    );
    t.notOk(res.text.includes(NOTE), `${role} × internal: without the note's text`);
  }
}
