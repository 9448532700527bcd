// Store and NATS round trips of every public operation of identity, counted on the real servers
// (command monitoring on the service's own connection). The README's table is this test's
// expectation: a change that adds a round trip to an operation fails here.
import { callRpc } from '@support-desk/platform/messaging';
import { connectMongo } from '@support-desk/platform/service';
import { eventually, roundTripCounter, testEnv } from '@support-desk/platform/testing';
import t from 'tap';
import { cliContext } from '../src/use-cases/deps.js';
import { createApiKey } from '../src/use-cases/api-keys.js';
import { createHousekeeping } from '../src/use-cases/housekeeping.js';
import { createOAuthClient } from '../src/use-cases/oauth-clients.js';
import { createUser } from '../src/use-cases/users.js';
import { body, harness, callerOf } from './helpers.js';
import { pkceAuthorizeUrl } from './oauth-flow.js';
import { EXPECTED_TRIPS, type Trips } from './round-trips-expected.js';

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** `name=value` of the cookies a response sets (the test's browser). */
function cookiesOf(res: { headers: Record<string, unknown> }, jar: Map<string, string>) {
  const set = res.headers['set-cookie'];
  for (const c of Array.isArray(set) ? set : set ? [String(set)] : []) {
    const [pair] = String(c).split(';');
    const i = pair.indexOf('=');
    jar.set(pair.slice(0, i), pair.slice(i + 1));
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

const hiddenField = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1].replace(/&amp;/g, '&');

t.test('round trips of every public identity operation', async (t) => {
  // Group names are remembered for the whole test (however slow the machine): the cases that read
  // them are made explicit with `forget`.
  const h = await harness(
    t,
    { IDENTITY_HOUSEKEEPING_INTERVAL_MS: '0', IDENTITY_GROUP_CACHE_TTL_MS: '3600000' },
    { countCommands: true },
  );
  // The relay's publishing is background work: paused, only the call itself is counted. A pass
  // already running when the test set out (slow on a loaded machine) would publish the groups'
  // events and make this replica forget their names mid-test: wait for it, and for its messages.
  await h.relay.pause();
  await h.nc.flush();
  const counter = roundTripCounter(h.conn, h.nc);
  const measured = new Map<string, Trips>();
  const measure = async <T>(operation: string, run: () => Promise<T>): Promise<T> => {
    const { result, trips } = await counter.measure(run);
    measured.set(operation, { store: [...trips.storeCommands].sort(), nats: trips.nats });
    return result;
  };
  // Reads made to wait for background work go through another connection, so they are not counted.
  const observer = await connectMongo({ url: testEnv.mongoUrl, dbName: h.conn.name });
  t.teardown(() => observer.close());

  const ctx = cliContext();
  const password = 'correct horse battery staple';
  const admin = await h.headers('admin');
  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => {
    const res = await h.app.inject({ method, url, headers: admin, ...(payload ? { payload } : {}) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
    return body(res).data;
  };

  await createUser(h.deps, ctx, { email: 'root@example.com', name: 'Root', role: 'admin' });
  await createUser(h.deps, ctx, { email: 'second@example.com', name: 'Second', role: 'admin' });
  const g1 = await api('POST', '/v1/groups', { name: 'Billing' });
  const g2 = await api('POST', '/v1/groups', { name: 'Support' });
  const alice = await createUser(h.deps, ctx, {
    email: 'alice@example.com',
    name: 'Alice',
    role: 'agent',
    groups: [g1.id, g2.id],
    password,
  });
  const key = await createApiKey(h.deps, ctx, {
    ownerEmail: 'alice@example.com',
    name: 'alice key',
    scopes: ['requests:read'],
  });
  const redirectUri = 'http://127.0.0.1:9/callback';
  const client = await createOAuthClient(h.deps, ctx, { name: 'Web', redirectUris: [redirectUri] });

  // Users
  await measure('GET /v1/users', () => api('GET', '/v1/users'));
  await measure('GET /v1/users?role&search', () => api('GET', '/v1/users?role=agent&search=ali'));
  const byName = '/v1/users?role=agent,admin&sort=name&limit=1';
  const { nextCursor } = (await api('GET', byName)).pagination;
  await measure('GET /v1/users?role=agent,admin&sort=name&cursor= (cursor mode)', () =>
    api('GET', `${byName}&cursor=${nextCursor}`),
  );
  await measure('GET /v1/users/:id', () => api('GET', `/v1/users/${alice.id}`));
  // As on a replica that has not read these groups yet (or after their change).
  h.deps.groups.forget(g1.id);
  h.deps.groups.forget(g2.id);
  await measure('GET /v1/users/:id (2 group names not remembered)', () =>
    api('GET', `/v1/users/${alice.id}`),
  );
  await measure('POST /v1/users', () =>
    api('POST', '/v1/users', { email: 'bob@example.com', name: 'Bob', role: 'viewer' }),
  );
  const carol = await measure('POST /v1/users (with groups)', () =>
    api('POST', '/v1/users', { email: 'carol@example.com', name: 'Carol', role: 'agent', groups: [g1.id] }),
  );
  await measure('PATCH /v1/users/:id (name)', () =>
    api('PATCH', `/v1/users/${alice.id}`, { name: 'Alice A' }),
  );
  await measure('PATCH /v1/users/:id (groups)', () =>
    api('PATCH', `/v1/users/${carol.id}`, { groups: [g1.id, g2.id] }),
  );
  await measure('PATCH /v1/users/:id (no change)', () =>
    api('PATCH', `/v1/users/${alice.id}`, { name: 'Alice A' }),
  );
  const second = await h.deps.users.findByEmail('second@example.com');
  await measure('PATCH /v1/users/:id (demote an admin)', () =>
    api('PATCH', `/v1/users/${second!._id}`, { role: 'agent' }),
  );
  await measure('DELETE /v1/users/:id', () => api('DELETE', `/v1/users/${carol.id}`));
  const me = await h.headers('agent', { userId: alice.id });
  await measure('GET /v1/me', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers: me });
    if (res.statusCode !== 200) throw new Error(res.body);
  });

  // Groups
  await measure('GET /v1/groups', () => api('GET', '/v1/groups'));
  const g3 = await measure('POST /v1/groups', () => api('POST', '/v1/groups', { name: 'Escalations' }));
  await measure('GET /v1/groups/:id', () => api('GET', `/v1/groups/${g1.id}`));
  await measure('PATCH /v1/groups/:id', () => api('PATCH', `/v1/groups/${g1.id}`, { description: 'Money' }));
  await measure('GET /v1/groups/:id/members', () => api('GET', `/v1/groups/${g1.id}/members`));
  await measure('POST /v1/groups/:id/members', () =>
    api('POST', `/v1/groups/${g3.id}/members`, { userId: alice.id }),
  );
  await measure('POST /v1/groups/:id/members (already a member)', () =>
    api('POST', `/v1/groups/${g3.id}/members`, { userId: alice.id }),
  );
  await measure('DELETE /v1/groups/:id/members/:userId', () =>
    api('DELETE', `/v1/groups/${g3.id}/members/${alice.id}`),
  );
  await api('POST', `/v1/groups/${g3.id}/members`, { userId: alice.id });
  await measure('DELETE /v1/groups/:id (one member)', () => api('DELETE', `/v1/groups/${g3.id}`));

  // The OAuth server: sign-in, consent, code, tokens, revocation, sign-out.
  const jar = new Map<string, string>();
  const pkce = pkceAuthorizeUrl('http://localhost', {
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scope: 'requests:read',
  });
  const { verifier } = pkce;
  const authorize = `${pkce.url.pathname}${pkce.url.search}`;
  const page = async (method: 'GET' | 'POST', url: string, fields?: Record<string, string>) => {
    const res = await h.app.inject({
      method,
      url,
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(fields ? FORM : {}) },
      ...(fields ? { payload: form(fields) } : {}),
    });
    cookiesOf(res, jar);
    return res;
  };
  const loginPage = await measure('GET /oauth/authorize (no session)', () => page('GET', authorize));
  const signIn = {
    csrf_token: hiddenField(loginPage.body, 'csrf_token'),
    request: hiddenField(loginPage.body, 'request'),
    email: 'alice@example.com',
  };
  const refused = await measure('POST /oauth/login (wrong password)', () =>
    page('POST', '/oauth/login', { ...signIn, password: 'not the password!' }),
  );
  t.equal(refused.statusCode, 401);
  const signedIn = await measure('POST /oauth/login', () =>
    page('POST', '/oauth/login', { ...signIn, password }),
  );
  t.equal(signedIn.statusCode, 303);
  const consent = await measure('GET /oauth/authorize (session: consent)', () => page('GET', authorize));
  const approved = await measure('POST /oauth/authorize (approve)', () =>
    page('POST', '/oauth/authorize', {
      csrf_token: hiddenField(consent.body, 'csrf_token'),
      request: hiddenField(consent.body, 'request'),
      decision: 'approve',
    }),
  );
  const code = new URL(approved.headers.location as string).searchParams.get('code')!;
  const token = async (fields: Record<string, string>) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: FORM,
      payload: form({ client_id: client.client_id, client_secret: client.client_secret!, ...fields }),
    });
    if (res.statusCode !== 200) throw new Error(`token endpoint answered ${res.statusCode}: ${res.body}`);
    return res.json() as { refresh_token: string; access_token: string };
  };
  const issued = await measure('POST /oauth/token (authorization_code)', () =>
    token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }),
  );
  const rotated = await measure('POST /oauth/token (refresh_token)', () =>
    token({ grant_type: 'refresh_token', refresh_token: issued.refresh_token }),
  );
  await measure('POST /oauth/revoke', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: FORM,
      payload: form({
        client_id: client.client_id,
        client_secret: client.client_secret!,
        token: rotated.refresh_token,
      }),
    });
    t.equal(res.statusCode, 200);
  });
  const logoutPage = await page('GET', authorize);
  await measure('POST /oauth/logout', () =>
    page('POST', '/oauth/logout', { csrf_token: hiddenField(logoutPage.body, 'csrf_token') }),
  );

  // What the gateway and requests ask over NATS (one request-reply: the request and its reply).
  const usedAt = () => observer.collection('api_keys').findOne({ _id: key.id as never });
  await measure('rpc resolveApiKey (first use this minute: + lastUsedAt)', async () => {
    const reply = await callRpc<{ key: string }, { valid: boolean }>(
      h.nc,
      h.names.rpc.resolveApiKey,
      {
        key: key.key,
      },
      callerOf('resolveApiKey'),
    );
    t.ok(reply.valid);
    await eventually(async () => (await usedAt())?.lastUsedAt, { timeoutMs: 5000, what: 'lastUsedAt' });
  });
  await measure('rpc resolveApiKey', () =>
    callRpc(h.nc, h.names.rpc.resolveApiKey, { key: key.key }, callerOf('resolveApiKey')),
  );
  await measure('rpc resolveApiKey (unknown key)', () =>
    callRpc(
      h.nc,
      h.names.rpc.resolveApiKey,
      { key: `sd_key_${'0'.repeat(26)}_${'A'.repeat(43)}` },
      callerOf('resolveApiKey'),
    ),
  );
  await measure('rpc getUser', () =>
    callRpc(h.nc, h.names.rpc.getUser, { id: alice.id }, callerOf('getUser')),
  );
  await measure('rpc getGroup', () =>
    callRpc(h.nc, h.names.rpc.getGroup, { id: g1.id }, callerOf('getGroup')),
  );
  await measure('rpc getOAuthClient', () =>
    callRpc(h.nc, h.names.rpc.getOAuthClient, { id: client.client_id }, callerOf('getOAuthClient')),
  );
  await measure('rpc getSettings', () => callRpc(h.nc, h.names.rpc.getSettings, {}, callerOf('getSettings')));

  // Background: one housekeeping pass with nothing due.
  const housekeeping = createHousekeeping(h.deps, { intervalMs: 3_600_000 });
  await measure('housekeeping pass (the first: in full)', () => housekeeping.purgeOnce());
  await measure('housekeeping pass (the next: by due hour)', () => housekeeping.purgeOnce());

  if (process.env.PRINT_ROUND_TRIPS) {
    for (const [op, trips] of measured) console.error(JSON.stringify([op, trips]));
  }
  for (const [op, expected] of Object.entries(EXPECTED_TRIPS)) {
    t.same(measured.get(op), expected, op);
  }
  t.same(
    [...measured.keys()].sort(),
    Object.keys(EXPECTED_TRIPS).sort(),
    'every operation has an expectation',
  );
});
