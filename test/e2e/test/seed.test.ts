// `sd-seed --demo`: the demo data set seen through the gateway (users by role, groups,
// requests by status and priority, comments, attachments with real magic bytes), its events in
// audit, idempotency per run id (a second run creates nothing) and a separate set per run id.
import t from 'tap';
import { createKey } from '../src/actors.js';
import { expectOk } from '../src/expect.js';
import { type Api, type Json, qs, request } from '../src/http.js';
import { eventually, type Stack, startStack } from '../src/stack.js';

const STATUSES = ['open', 'assigned', 'in_progress', 'pending', 'resolved', 'closed'];
const PRIORITIES = ['critical', 'high', 'medium', 'low'];
const DOMAIN = 'demo.support-desk.local';
/** The default size (50 ≥ 24: every status × priority pair occurs; statuses cycle with i, priorities with i / 6). */
const N = 50;
const N_DEFAULT_RUN = 12;

// A stack of its own: the seeder bootstraps the first admin and fills the store with demo data.
const stack = await startStack(t, { private: true });
const adminEmail = `seed-admin.${stack.run}@example.com`;
await stack.deskctlJson(['bootstrap', '--email', adminEmail, '--name', 'Seed Admin']);
const admin = stack.api((await createKey(stack, adminEmail, ['admin'])).key);
const RUN = `${stack.run}-a`.slice(0, 32);
const RUN2 = `${stack.run}-b`.slice(0, 32);

const seed = (s: Stack, args: string[]) => s.seed(['--demo', '--url', s.origin, ...args]);

/** What the documented distribution gives for `n` requests. */
function expectedCounts(n: number) {
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  const byPriority = Object.fromEntries(PRIORITIES.map((p) => [p, 0]));
  for (let i = 0; i < n; i++) {
    byStatus[STATUSES[i % 6]] += 1;
    byPriority[PRIORITIES[Math.floor(i / 6) % 4]] += 1;
  }
  return { byStatus, byPriority };
}

async function listTotal(
  api: Api,
  path: string,
  query: Record<string, string | number> = {},
): Promise<number> {
  const data = expectOk(t, await api.get(`${path}${qs({ ...query, limit: 1 })}`), 200, `GET ${path}`);
  return data?.pagination?.total ?? -1;
}

async function usersOfRun(runId: string): Promise<Json[]> {
  const res = await admin.get(`/v1/users${qs({ search: `+${runId}@${DOMAIN}`, limit: 100 })}`);
  return res.json?.data?.users ?? [];
}

/** Every audit event (bounded paging), for counting by resource and type. */
async function allEvents(): Promise<Json[]> {
  const out: Json[] = [];
  for (let page = 1; page <= 100; page++) {
    const data = (await admin.get(`/v1/events?limit=100&page=${page}`)).json?.data;
    out.push(...(data?.events ?? []));
    if (!data?.pagination?.hasMore) break;
  }
  return out;
}

const details = new Map<string, Json>();
let first: Json;

t.test('usage errors exit 2 and write nothing', async (t) => {
  for (const args of [[], ['--requests', '0'], ['--run-id', 'Bad_Id'], ['--url', 'ftp://x']]) {
    const argv = args.length === 0 ? ['--url', stack.origin] : ['--demo', ...args];
    const r = await stack.seed(argv);
    t.equal(r.code, 2, `sd-seed ${argv.join(' ')} → exit 2`);
  }
  const down = await stack.seed(['--demo', '--run-id', 'nogateway', '--url', 'http://127.0.0.1:9']);
  t.equal(down.code, 1, 'unreachable gateway → exit 1');
  t.match(down.stderr, /gateway/, 'the message names the gateway');
  t.equal((await usersOfRun('nogateway')).length, 0, 'nothing created when the gateway is unreachable');
});

t.test(`first run (default size: ${N} requests)`, async (t) => {
  const started = Date.now();
  const r = await seed(stack, ['--run-id', RUN]);
  t.equal(r.code, 0, `exit 0 (stderr: ${r.stderr.trim().slice(0, 400)})`);
  first = r.json;
  // Not a terminal here: plain progress lines on stderr, the last one at 100 %.
  t.match(r.stderr, new RegExp(`sd-seed: ${N}/${N} requests \\(100%\\), \\d+ API calls, done\\n`));
  t.notOk(r.stderr.includes('\u001b['), 'no progress bar (no terminal)');
  t.comment(
    `seed of ${N} requests took ${((Date.now() - started) / 1000).toFixed(1)} s (seeder says ${first?.seconds} s)`,
  );
  t.equal(first.status, 'seeded');
  t.equal(first.tag, `demo:${RUN}`);
  t.same(first.created, {
    users: 15,
    groups: 4,
    requests: N,
    comments: first.totals.comments,
    attachments: first.totals.attachments,
    updates: first.created.updates,
  });
  t.ok(first.created.updates >= N - Math.ceil(N / 6), 'status/assignment moves made');
  t.same(first.apiKeys.created, first.apiKeys.revoked, 'every seeding key revoked at the end');
  const want = expectedCounts(N);
  t.same(first.totals.byStatus, want.byStatus, 'summary: requests by status');
  t.same(first.totals.byPriority, want.byPriority, 'summary: requests by priority');
  t.equal(first.requestIds.length, N);
});

t.test('users and groups through the API', async (t) => {
  const users = await usersOfRun(RUN);
  t.equal(users.length, first.totals.users, 'every seeded user listed');
  const byRole = { admin: 0, agent: 0, viewer: 0 } as Record<string, number>;
  for (const u of users) byRole[u.role] += 1;
  t.same(byRole, first.totals.byRole, 'users by role');
  t.ok(byRole.admin >= 2 && byRole.agent >= 6 && byRole.viewer >= 3, 'admins, agents and viewers');
  t.equal(users.filter((u) => u.isVip).length, first.totals.vip, 'VIPs');
  t.ok(first.totals.vip >= 2, 'at least two VIPs');
  t.ok(
    users.every((u) => u.status === 'active' && u.email.endsWith(`+${RUN}@${DOMAIN}`)),
    'active, emails carry the run id',
  );
  const groups = expectOk(t, await admin.get('/v1/groups'), 200, 'GET /v1/groups')?.groups ?? [];
  for (const name of ['Tier 1', 'Tier 2', 'Billing', 'Network']) {
    const g = groups.find((x: Json) => x.name === `${name} (${RUN})`);
    if (!t.ok(g, `group "${name} (${RUN})"`)) continue;
    const members = users.filter((u) => u.groups.some((x: Json) => x.id === g.id)).length;
    t.ok(members >= 2, `${name} has members`);
    t.equal(g.memberCount, members, `${name} memberCount`);
  }
});

t.test('requests by status and priority, comments and attachments', async (t) => {
  t.equal(await listTotal(admin, '/v1/requests'), N, 'all requests listed');
  for (const [status, n] of Object.entries(first.totals.byStatus))
    t.equal(await listTotal(admin, '/v1/requests', { status }), n, `status ${status}: ${n}`);
  for (const [priority, n] of Object.entries(first.totals.byPriority))
    t.equal(await listTotal(admin, '/v1/requests', { priority }), n, `priority ${priority}: ${n}`);

  let comments = 0;
  let internal = 0;
  let attachments = 0;
  const requesters = new Set<string>();
  const types = new Set<string>();
  for (const id of first.requestIds as string[]) {
    const d = (await admin.get(`/v1/requests/${id}`)).json?.data;
    details.set(id, d);
    comments += d.comments.length;
    internal += d.comments.filter((c: Json) => c.isInternal).length;
    attachments += d.attachments.length;
    requesters.add(d.requester.id);
    for (const a of d.attachments) types.add(a.contentType);
  }
  const all = [...details.values()];
  t.ok(
    all.every((d) => d.tags.includes(`demo:${RUN}`)),
    'every request tagged with the run',
  );
  t.ok(
    all.filter((d) => d.status !== 'open').every((d) => d.assignedTo?.id),
    'every request past open has an assignee',
  );
  t.ok(
    all.filter((d) => ['resolved', 'closed'].includes(d.status)).every((d) => d.resolution),
    'resolved and closed requests carry a resolution',
  );
  t.ok(
    all.some((d) => d.requester.isVip),
    'some requests come from VIPs',
  );
  t.ok(requesters.size >= 3, 'several requesters');
  t.equal(comments, first.totals.comments, 'comments');
  t.equal(internal, first.totals.internalComments, 'internal comments');
  t.ok(internal > 0 && internal < comments, 'public and internal comments');
  t.equal(attachments, first.totals.attachments, 'attachments');
  t.ok(
    types.has('image/png') && types.has('application/pdf'),
    `detected content types: ${[...types].join(', ')}`,
  );

  const viewerless = all.find((d) => d.attachments.some((a: Json) => a.contentType === 'image/png'));
  const png = viewerless?.attachments.find((a: Json) => a.contentType === 'image/png');
  const pdf = all.flatMap((d) => d.attachments).find((a: Json) => a.contentType === 'application/pdf');
  for (const [file, magic] of [
    [png, '89504e470d0a1a0a'],
    [pdf, '255044462d'],
  ] as const) {
    const res = await request(file.url, { headers: { authorization: `Bearer ${admin.token}` } });
    t.equal(res.status, 200, `download ${file.filename}`);
    t.equal(res.body.subarray(0, magic.length / 2).toString('hex'), magic, `${file.filename} magic bytes`);
    t.equal(res.body.length, file.size, `${file.filename} size`);
  }
});

t.test('the seeded writes reached audit', async (t) => {
  const users = await usersOfRun(RUN);
  const groups = (first.groups as Json[]).map((g) => g.id);
  const count = (events: Json[], id: string, type: string) =>
    events.filter((e) => e.resourceId === id && e.type === type).length;
  const events = await eventually(
    async () => {
      const evs = await allEvents();
      const done = (first.requestIds as string[]).every((id) => {
        const d = details.get(id);
        return (
          count(evs, id, 'request.created') === 1 &&
          count(evs, id, 'request.comment_added') === d.comments.length &&
          count(evs, id, 'request.attachment_added') === d.attachments.length
        );
      });
      return done && users.every((u) => count(evs, u.id, 'user.created') === 1) ? evs : null;
    },
    { timeoutMs: 30_000, what: 'every seeded write in the audit store' },
  ).catch((err) => {
    t.fail(String(err));
    return [] as Json[];
  });
  let created = 0;
  let comments = 0;
  let attachments = 0;
  for (const id of first.requestIds as string[]) {
    created += count(events, id, 'request.created');
    comments += count(events, id, 'request.comment_added');
    attachments += count(events, id, 'request.attachment_added');
    const d = details.get(id);
    if (d.status !== 'open')
      t.ok(count(events, id, 'request.assigned') >= 1, `${id} (${d.status}): request.assigned`);
    if (!['open', 'assigned'].includes(d.status))
      t.ok(count(events, id, 'request.status_changed') >= 1, `${id} (${d.status}): request.status_changed`);
  }
  t.equal(created, N, 'one request.created per request');
  t.equal(comments, first.totals.comments, 'one comment_added per comment');
  t.equal(attachments, first.totals.attachments, 'one attachment_added per attachment');
  const userEvents = events.filter(
    (e) => e.type === 'user.created' && users.some((u) => u.id === e.resourceId),
  );
  t.equal(userEvents.length, users.length, 'one user.created per seeded user');
  const sources = new Set<string>();
  for (const e of userEvents)
    sources.add((await admin.get(`/v1/events/${e.id}`)).json?.data?.metadata?.source);
  t.same([...sources], ['cli'], 'user events come from deskctl (single read: metadata.source cli)');
  for (const g of groups)
    t.ok(count(events, g, 'system.config_changed') >= 1, `group ${g}: system.config_changed`);
  const keys = (await stack.deskctlJson(['api-keys', 'list', '--all'])).keys as Json[];
  const seeding = keys.filter((k) => k.name === `deskctl seed ${RUN}`);
  t.equal(seeding.length, first.apiKeys.created, 'the seeding keys');
  t.ok(
    seeding.every((k) => k.revokedAt),
    'all revoked',
  );
});

t.test('a second run with the same run id creates nothing', async (t) => {
  const before = {
    requests: await listTotal(admin, '/v1/requests'),
    users: await listTotal(admin, '/v1/users'),
    groups: (await admin.get('/v1/groups')).json?.data?.groups?.length,
  };
  const r = await seed(stack, ['--requests', String(N), '--run-id', RUN]);
  t.equal(r.code, 0, 'exit 0');
  t.equal(r.json?.status, 'already_seeded', 'says it was already seeded');
  t.same(r.json?.created, { users: 0, groups: 0, requests: 0, comments: 0, attachments: 0, updates: 0 });
  t.same(r.json?.totals, first.totals, 'reports the existing set');
  const text = await stack.seed(['--demo', '--url', stack.origin, '--run-id', RUN], { json: false });
  t.match(text.stdout, /already seeded/, 'the text output says so');
  t.same(
    {
      requests: await listTotal(admin, '/v1/requests'),
      users: await listTotal(admin, '/v1/users'),
      groups: (await admin.get('/v1/groups')).json?.data?.groups?.length,
    },
    before,
    'counts unchanged',
  );
});

t.test('another run id creates a separate set; the default run keeps plain group names', async (t) => {
  const other = await seed(stack, ['--requests', '7', '--run-id', RUN2]);
  t.equal(other.code, 0, `exit 0 (${other.stderr.trim().slice(0, 300)})`);
  t.equal(other.json?.status, 'seeded');
  t.equal(other.json?.created.users, 15, 'new users');
  t.equal((await usersOfRun(RUN2)).length, 15, 'listed under the new run id');
  t.equal(await listTotal(admin, '/v1/requests'), N + 7, 'requests added to the first set');
  const none = new Set(other.json?.requestIds);
  t.notOk(
    (first.requestIds as string[]).some((id) => none.has(id)),
    'distinct requests',
  );

  const def = await seed(stack, ['--requests', String(N_DEFAULT_RUN)]);
  t.equal(def.code, 0, `default run: exit 0 (${def.stderr.trim().slice(0, 300)})`);
  t.equal(def.json?.runId, 'demo', 'default run id "demo"');
  t.equal(def.json?.tag, 'demo:demo');
  const names = ((await admin.get('/v1/groups')).json?.data?.groups ?? []).map((g: Json) => g.name);
  for (const n of ['Tier 1', 'Tier 2', 'Billing', 'Network']) t.ok(names.includes(n), `group "${n}"`);
  t.equal((await usersOfRun('demo')).length, 15, 'users agent1+demo@… and so on');
  t.equal(await listTotal(admin, '/v1/requests'), N + 7 + N_DEFAULT_RUN, 'requests of all three runs');
  const again = await seed(stack, []);
  t.equal(again.json?.status, 'already_seeded', 'the default run is idempotent too');
});
