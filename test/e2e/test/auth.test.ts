// Authentication and permission rules 1–2 of the spec's Errors section through the gateway:
// missing, malformed, unknown, revoked and expired credentials → 401; lacking permission → 403;
// the IP allowlist (per key and global); a role change takes effect at once.
import t from 'tap';
import { cast, createActor, createKey, SUITE_PLAN } from '../src/actors.js';
import { expectError, expectOk } from '../src/expect.js';
import { ABSENT } from '../src/fixtures.js';
import { request } from '../src/http.js';
import { AT_ONCE_MS, eventually, startStack } from '../src/stack.js';

const stack = await startStack(t);
const { admin, agent, viewer } = await cast(stack);
// Created first so that it has expired by the last subtest: 10 s (the suite's stacks allow keys
// that short, API_KEY_MIN_LIFETIME_SECONDS in SHARED_STACK_ENV; deployments default to 60 s).
const EXPIRES_IN_S = 10;
const expiring = await createKey(
  stack,
  agent.email,
  ['requests:read'],
  ['--expires-in', `${EXPIRES_IN_S}s`, ...SUITE_PLAN],
  'expiring',
);
const expiringSince = Date.now();
// Used while valid, so the gateway has it cached when it expires.
const beforeExpiry = (await stack.api(expiring.key).get('/v1/me')).status;

const raw = (authorization?: string) =>
  request(`${stack.base}/me`, { headers: { accept: 'application/json', authorization } });

t.test(
  'rule 1: a missing, malformed or unknown credential → 401 UNAUTHORIZED with WWW-Authenticate',
  async (t) => {
    const cases: [string, string | undefined][] = [
      ['no Authorization header', undefined],
      ['Basic scheme', `Basic ${Buffer.from(`${agent.email}:secret`).toString('base64')}`],
      ['Bearer without a token', 'Bearer'],
      ['Bearer with spaces only', 'Bearer    '],
      ['a random string', 'Bearer not-a-credential'],
      ['the key without its secret', `Bearer sd_${agent.keyId}`],
      ['a key with a wrong secret', `Bearer ${agent.key.slice(0, -6)}abcdef`],
      [
        'a key with an unknown id',
        `Bearer ${agent.key.replace(agent.keyId, 'key_00000000000000000000000000')}`,
      ],
      ['a malformed JWT', 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln'],
      ['the key twice', `Bearer ${agent.key} ${agent.key}`],
    ];
    for (const [what, header] of cases) {
      const res = await raw(header);
      expectError(t, res, 401, 'UNAUTHORIZED', what);
      t.match(String(res.headers['www-authenticate']), /^Bearer/, `${what}: WWW-Authenticate: Bearer`);
    }
    // The auth scheme is case-insensitive (RFC 7235).
    expectOk(t, await raw(`bearer ${agent.key}`), 200, 'lower-case "bearer" scheme');
    // Every /v1 route refuses an anonymous call before anything else (even unknown ids).
    expectError(
      t,
      await stack.api(null).delete(`/v1/requests/${ABSENT.request}`),
      401,
      'UNAUTHORIZED',
      'anonymous DELETE',
    );
    expectError(
      t,
      await stack.api(null).post('/v1/users', {}),
      401,
      'UNAUTHORIZED',
      'anonymous POST /v1/users',
    );
  },
);

t.test('rule 1: a revoked key is refused at once', async (t) => {
  const { id, key } = await createKey(stack, agent.email, ['requests:read'], undefined, 'to-revoke');
  const api = stack.api(key);
  expectOk(t, await api.get('/v1/me'), 200, 'the key works (and is now cached by the gateway)');
  const revoked = await stack.deskctl(['api-keys', 'revoke', id, '--yes']);
  t.equal(revoked.code, 0, `deskctl api-keys revoke exits 0 ${revoked.stderr}`);
  const refused = await eventually(async () => (await api.get('/v1/me')).status === 401, {
    timeoutMs: AT_ONCE_MS,
    intervalMs: 50,
    what: 'the revoked key to be refused',
  }).catch(() => false);
  t.ok(
    refused,
    `refused (401) within ${AT_ONCE_MS} ms (well under the 30 s credential cache: the notice path, not expiry)`,
  );
  expectError(t, await api.get('/v1/requests'), 401, 'UNAUTHORIZED', 'revoked key');
  const list = await stack.deskctlJson(['api-keys', 'list', '--owner', agent.email]);
  const entry = (list?.keys ?? list)?.find?.((k: { id: string }) => k.id === id);
  t.ok(entry?.revokedAt, 'api-keys list shows revokedAt');
  t.notOk(JSON.stringify(list).includes(key), 'api-keys list never shows a key value');
});

t.test('rule 2: lacking permission → 403 FORBIDDEN', async (t) => {
  expectError(
    t,
    await agent.api.delete(`/v1/requests/${ABSENT.request}`),
    403,
    'FORBIDDEN',
    'DELETE /requests/:id by an agent (spec example)',
  );
  expectError(
    t,
    await viewer.api.delete(`/v1/requests/${ABSENT.request}`),
    403,
    'FORBIDDEN',
    'DELETE /requests/:id by a viewer',
  );
  expectError(
    t,
    await viewer.api.patch(`/v1/requests/${ABSENT.request}`, { priority: 'low' }),
    403,
    'FORBIDDEN',
    'viewer PATCH',
  );
  expectError(
    t,
    await agent.api.delete(`/v1/users/${viewer.id}`),
    403,
    'FORBIDDEN',
    'DELETE /users/:id by an agent',
  );
  expectError(t, await agent.api.get('/v1/events'), 403, 'FORBIDDEN', 'events by an agent');
  const readOnly = await createActor(stack, 'admin', 'readonly-admin', {
    scopes: ['requests:read', 'users:read'],
  });
  expectError(
    t,
    await readOnly.api.delete(`/v1/requests/${ABSENT.request}`),
    403,
    'FORBIDDEN',
    "an admin's key without the admin scope cannot DELETE",
  );
  expectError(
    t,
    await readOnly.api.post('/v1/requests', { title: 'a', description: 'b', priority: 'low' }),
    403,
    'FORBIDDEN',
    'a read-only key cannot write',
  );
  expectOk(t, await readOnly.api.get('/v1/requests'), 200, 'but can read');
});

t.test('a client cannot forge the internal principal header', async (t) => {
  const forged = {
    'x-sd-principal': 'eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYWRtaW4iLCJzY29wZXMiOlsiYWRtaW4iXX0.AAAA',
    'x-sd-user-id': admin.id,
    'x-forwarded-user': admin.email,
  };
  expectError(
    t,
    await viewer.api.delete(`/v1/requests/${ABSENT.request}`, { headers: forged }),
    403,
    'FORBIDDEN',
    'viewer + forged principal header',
  );
  expectError(
    t,
    await stack.api(null).get('/v1/me', { headers: forged }),
    401,
    'UNAUTHORIZED',
    'no credential + forged principal header',
  );
  const me = expectOk(
    t,
    await viewer.api.get('/v1/me', { headers: forged }),
    200,
    '/me with a forged header',
  );
  t.equal(me?.id, viewer.id, 'the caller is still the viewer');
});

t.test('a role change takes effect at once', async (t) => {
  const boss = await createActor(stack, 'admin', 'demoted-admin');
  expectOk(t, await boss.api.get('/v1/events?limit=1'), 200, 'admin reads events');
  expectOk(t, await admin.api.patch(`/v1/users/${boss.id}`, { role: 'viewer' }), 200, 'demoted to viewer');
  const cut = await eventually(async () => (await boss.api.get('/v1/events?limit=1')).status === 403, {
    timeoutMs: AT_ONCE_MS,
    intervalMs: 50,
    what: 'the demoted key to lose admin',
  }).catch(() => false);
  t.ok(
    cut,
    `the key loses the admin scope within ${AT_ONCE_MS} ms (well under the 30 s credential cache: the notice path, not expiry)`,
  );
  const me = expectOk(t, await boss.api.get('/v1/me'), 200, '/me after demotion');
  t.same(me?.permissions, ['requests:read', 'users:read'], 'a viewer’s scopes');
});

t.test('IP allowlist: per key and global (API keys)', async (t) => {
  const elsewhere = await createKey(
    stack,
    agent.email,
    ['requests:read'],
    ['--allow-ip', '10.1.2.3', ...SUITE_PLAN],
    'elsewhere',
  );
  expectError(
    t,
    await stack.api(elsewhere.key).get('/v1/requests'),
    403,
    'FORBIDDEN',
    'key allowed only from 10.1.2.3, called from 127.0.0.1',
  );
  const spoofed = await stack
    .api(elsewhere.key)
    .get('/v1/requests', { headers: { 'x-forwarded-for': '10.1.2.3' } });
  expectError(t, spoofed, 403, 'FORBIDDEN', 'a forged X-Forwarded-For from an untrusted peer is ignored');
  const here = await createKey(
    stack,
    agent.email,
    ['requests:read'],
    ['--allow-ip', '127.0.0.0/8,::1', ...SUITE_PLAN],
    'loopback',
  );
  expectOk(t, await stack.api(here.key).get('/v1/requests'), 200, 'key allowed from 127.0.0.0/8');

  const set = await stack.deskctl(['settings', 'ip-allowlist', 'set', '10.0.0.0/8']);
  t.equal(set.code, 0, `deskctl settings ip-allowlist set exits 0 ${set.stderr}`);
  try {
    const blocked = await eventually(async () => (await agent.api.get('/v1/me')).status === 403, {
      timeoutMs: 10_000,
      what: 'the global allowlist to apply',
    }).catch(() => false);
    t.ok(blocked, 'global allowlist without 127.0.0.1: API-key calls → 403');
    expectError(t, await agent.api.get('/v1/requests'), 403, 'FORBIDDEN', 'blocked by the global allowlist');
    const show = await stack.deskctlJson(['settings', 'ip-allowlist', 'show']);
    t.match(JSON.stringify(show), /10\.0\.0\.0\/8/, 'settings ip-allowlist show lists it');
  } finally {
    const clear = await stack.deskctl(['settings', 'ip-allowlist', 'clear', '--yes']);
    t.equal(clear.code, 0, 'deskctl settings ip-allowlist clear exits 0');
  }
  const open = await eventually(async () => (await agent.api.get('/v1/me')).status === 200, {
    timeoutMs: 10_000,
    what: 'the allowlist to clear',
  }).catch(() => false);
  t.ok(open, 'cleared: calls pass again');
});

t.test('rule 1: an expired key → 401', async (t) => {
  t.equal(beforeExpiry, 200, `a key that expires after ${EXPIRES_IN_S} s works until then`);
  const wait = Math.max(0, expiringSince + EXPIRES_IN_S * 1000 - Date.now());
  t.comment(`waiting ${Math.round(wait / 1000)} s for the key to expire`);
  const expired = await eventually(async () => (await stack.api(expiring.key).get('/v1/me')).status === 401, {
    timeoutMs: wait + 8000,
    intervalMs: 500,
    what: 'the key to expire',
  }).catch(() => false);
  t.ok(expired, 'refused once expired');
  expectError(t, await stack.api(expiring.key).get('/v1/requests'), 401, 'UNAUTHORIZED', 'expired key');
});
