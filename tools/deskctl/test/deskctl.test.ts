import { newId, type ResolveApiKeyReply } from '@support-desk/contracts';
import { callRpc } from '@support-desk/platform/messaging';
import { eventually, freePort } from '@support-desk/platform/testing';
import t from 'tap';
import { body, callerOf, harness } from '@support-desk/identity/testing';
import { deskctl } from './helpers.js';

t.test('deskctl and API keys', async (t) => {
  const h = await harness(t);
  const run = (args: string[], stdin?: string) => deskctl(h.cliEnv, args, stdin);
  const resolve = (key: string) =>
    callRpc<{ key: string }, ResolveApiKeyReply>(
      h.nc,
      h.names.rpc.resolveApiKey,
      { key },
      callerOf('resolveApiKey'),
    );

  await t.test('usage errors exit 2, no command exits 2', async (t) => {
    const cases = [
      [],
      ['frobnicate'],
      ['users', 'create', '--bogus'],
      ['users', 'create', '--email', 'a@b.co', '--name', 'A'],
      ['users', 'create', '--email', 'a@b.co', '--name', 'A', '--role', 'boss'],
      ['api-keys', 'create', '--owner', 'x@y.z', '--name', 'k', '--scopes', 'admin', '--expires-in', 'soon'],
    ];
    const results = await Promise.all(cases.map((args) => run(args)));
    results.forEach((r, i) => {
      t.equal(r.code, 2, cases[i].join(' '));
      t.match(r.stderr, /usage/);
    });
  });

  await t.test('bootstrap creates the first admin and an admin key, then is skipped', async (t) => {
    const bad = await run([
      'bootstrap',
      '--email',
      'root@example.com',
      '--name',
      'Root',
      '--expires-in',
      '1y',
    ]);
    t.equal(bad.code, 2, 'a lifetime that is not a duration is a usage error');
    const r = await run([
      'bootstrap',
      '--email',
      'root@example.com',
      '--name',
      'Root',
      '--json',
      '--if-none',
      '--expires-in',
      '1h',
    ]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.json, { skipped: false, user: { email: 'root@example.com', role: 'admin' } });
    t.match(r.json.key, /^sd_key_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(r.json.expiresAt) - Date.now();
    t.ok(lifetime > 3500_000 && lifetime <= 3600_000, `the key expires in an hour (${r.json.expiresAt})`);
    const stored = await h.deps.apiKeys.findById(r.json.keyId);
    t.equal(stored?.expiresAt?.toISOString(), r.json.expiresAt, 'stored with its expiry');
    const reply = await resolve(r.json.key);
    t.match(reply, {
      valid: true,
      scopes: ['admin'],
      plan: 'standard',
      owner: { email: 'root@example.com', role: 'admin' },
    });
    const created = await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === r.json.user.id);
    t.equal(created.metadata.source, 'cli');
    t.equal(created.actor.id, 'deskctl');
    const keyEvent = await h.waitForEvent(
      (e) => e.type === 'system.config_changed' && e.resourceId === r.json.keyId,
    );
    t.notOk(
      JSON.stringify(keyEvent).includes(r.json.key.slice(`sd_${r.json.keyId}_`.length)),
      'the secret never appears in events',
    );
    const again = await run([
      'bootstrap',
      '--email',
      'other@example.com',
      '--name',
      'Other',
      '--json',
      '--if-none',
    ]);
    t.equal(again.code, 0);
    t.same(again.json, { skipped: true });
    const strict = await run(['bootstrap', '--email', 'other@example.com', '--name', 'Other']);
    t.equal(strict.code, 1);
    t.match(strict.stderr, /already exists/);
  });

  let agentId = '';
  await t.test('users create / set-password / groups create', async (t) => {
    const r = await run([
      'users',
      'create',
      '--email',
      'agent@example.com',
      '--name',
      'Agent',
      '--role',
      'agent',
      '--vip',
      '--json',
      '--as',
      'root@example.com',
    ]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.json, { email: 'agent@example.com', role: 'agent', isVip: true, status: 'active' });
    agentId = r.json.id;
    const ev = await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === agentId);
    t.equal(ev.actor.email, 'root@example.com', '--as names the actor');
    const dup = await run([
      'users',
      'create',
      '--email',
      'AGENT@example.com',
      '--name',
      'Agent',
      '--role',
      'agent',
    ]);
    t.equal(dup.code, 1);
    t.match(dup.stderr, /already exists/);
    const weak = await run(
      ['users', 'set-password', '--email', 'agent@example.com', '--password-stdin'],
      'short\n',
    );
    t.equal(weak.code, 1);
    t.match(weak.stderr, /at least 12/);
    const pw = await run(
      ['users', 'set-password', '--email', 'agent@example.com', '--password-stdin', '--json'],
      'correct horse battery staple\n',
    );
    t.equal(pw.code, 0, pw.stderr);
    t.match(pw.json, { id: agentId, passwordSet: true });
    const stored = await h.stored.users.findById(agentId).select('+passwordHash').lean();
    t.match(stored?.passwordHash, /^\$argon2id\$/);
    const nobody = await run(
      ['users', 'set-password', '--email', 'nobody@example.com', '--password-stdin'],
      'correct horse battery staple',
    );
    t.equal(nobody.code, 1);
    const g = await run(['groups', 'create', '--name', 'Billing', '--description', 'Money', '--json']);
    t.equal(g.code, 0, g.stderr);
    t.match(g.json, { id: /^grp_/, name: 'Billing', memberCount: 0 });
    const gdup = await run(['groups', 'create', '--name', 'billing']);
    t.equal(gdup.code, 1);
  });

  await t.test('provisioning: --groups, --if-missing (never changes what exists), groups list', async (t) => {
    const group = await run(['groups', 'create', '--name', 'Provisioned', '--json']);
    t.equal(group.code, 0, group.stderr);
    const sameGroup = await run(['groups', 'create', '--name', 'provisioned', '--if-missing', '--json']);
    t.equal(sameGroup.code, 0, sameGroup.stderr);
    t.match(sameGroup.json, { id: group.json.id, name: 'Provisioned', existed: true });
    const duplicate = await run(['groups', 'create', '--name', 'Provisioned', '--json']);
    t.equal(duplicate.code, 1, 'without --if-missing a taken name is still an error');

    const create = ['users', 'create', '--email', 'prov@example.com', '--name', 'Prov', '--role', 'agent'];
    const user = await run([...create, '--groups', group.json.id, '--vip', '--json']);
    t.equal(user.code, 0, user.stderr);
    t.match(user.json, {
      email: 'prov@example.com',
      isVip: true,
      groups: [{ id: group.json.id, name: 'Provisioned' }],
    });
    const created = await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === user.json.id);
    t.same(
      created.changes?.groups,
      { from: null, to: [group.json.id] },
      'membership in the one user.created event',
    );
    t.equal(created.metadata.source, 'cli');

    const again = await run([
      'users',
      'create',
      '--email',
      'PROV@example.com',
      '--name',
      'Other',
      '--role',
      'viewer',
      '--if-missing',
      '--json',
    ]);
    t.equal(again.code, 0, again.stderr);
    t.match(
      again.json,
      { id: user.json.id, name: 'Prov', role: 'agent', existed: true },
      'reported as it is',
    );
    t.equal((await h.stored.users.findById(user.json.id).lean())?.role, 'agent', 'and not changed');
    const taken = await run([...create, '--json']);
    t.equal(taken.code, 1, 'without --if-missing a taken email is still an error');
    t.match(taken.stderr, /already exists/);

    const user2 = (groups: string) =>
      run([
        'users',
        'create',
        '--email',
        'x2@example.com',
        '--name',
        'X',
        '--role',
        'agent',
        '--groups',
        groups,
        '--json',
      ]);
    const malformed = await user2('grp_nope');
    t.equal(malformed.code, 2, 'a malformed group id is a usage error');
    t.match(malformed.stderr, /--groups\.0 Expected string to match '\^grp_/);
    const notAnEmail = await run([
      'users',
      'create',
      '--email',
      'x3@localhost',
      '--name',
      'X',
      '--role',
      'agent',
      '--json',
    ]);
    t.equal(notAnEmail.code, 2, 'an address the HTTP API refuses is a usage error here too');
    t.match(notAnEmail.stderr, /--email Expected string to match 'email' format/);
    const unknown = await user2(newId('group'));
    t.equal(unknown.code, 1, 'an unknown group is refused');
    t.match(unknown.stderr, /unknown group/);

    const list = await run(['groups', 'list', '--json']);
    t.equal(list.code, 0, list.stderr);
    t.match(
      list.json.groups.find((g: { id: string }) => g.id === group.json.id),
      { name: 'Provisioned', memberCount: 1 },
    );
  });

  await t.test('api keys: create, list, resolve, allowlist, enterprise, expiry, revoke', async (t) => {
    // `api-keys create` for agent@example.com named k, with the given scopes and extra flags.
    const createKey = (scopes: string, ...extra: string[]) =>
      run([
        'api-keys',
        'create',
        '--owner',
        'agent@example.com',
        '--name',
        'k',
        '--scopes',
        scopes,
        ...extra,
      ]);
    const [bad, badIp, noOwner, limitsNoEnterprise] = await Promise.all([
      createKey('requests:read,root', '--json'),
      createKey('requests:read', '--allow-ip', '10.0.0.0/33'),
      run(['api-keys', 'create', '--owner', 'ghost@example.com', '--name', 'k', '--scopes', 'requests:read']),
      createKey('requests:read', '--rate-limit', '5'),
    ]);
    t.equal(bad.code, 1);
    t.match(bad.stderr, /scopes/);
    t.equal(badIp.code, 2);
    t.equal(noOwner.code, 1);
    t.equal(limitsNoEnterprise.code, 2);

    const r = await run([
      'api-keys',
      'create',
      '--owner',
      'agent@example.com',
      '--name',
      'CI',
      '--scopes',
      'requests:read,requests:write',
      '--plan',
      'enterprise',
      '--rate-limit',
      '1000',
      '--events-rate-limit',
      '200',
      '--allow-ip',
      '10.0.0.0/8,2001:db8::/32,192.168.1.7',
      '--expires-in',
      '30d',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.json, {
      id: /^key_/,
      key: /^sd_key_/,
      plan: 'enterprise',
      limits: { general: 1000, events: 200 },
      allowlist: ['10.0.0.0/8', '2001:db8::/32', '192.168.1.7'],
    });
    const reply = await resolve(r.json.key);
    t.match(reply, {
      valid: true,
      keyId: r.json.id,
      owner: { id: agentId, role: 'agent', status: 'active', isVip: true },
      scopes: ['requests:read', 'requests:write'],
      plan: 'enterprise',
      limits: { general: 1000, events: 200 },
      allowlist: ['10.0.0.0/8', '2001:db8::/32', '192.168.1.7'],
      globalAllowlist: [],
    });
    t.ok(reply.valid && Date.parse(reply.expiresAt!) > Date.now() + 29 * 86_400_000);
    const stored = await h.stored.apiKeys.findById(r.json.id).select('+secretHash').lean();
    t.match(stored?.secretHash, /^[0-9a-f]{64}$/);
    // The secret is what follows `sd_<key id>_` (it may itself contain `_`).
    const secret = r.json.key.slice(`sd_${r.json.id}_`.length);
    t.notOk(JSON.stringify(stored).includes(secret), 'only the hash is stored');
    // lastUsedAt is written after the reply, off the resolve path: wait for it, bounded.
    const used = await eventually(
      async () => (await h.stored.apiKeys.findById(r.json.id).lean())?.lastUsedAt,
      { what: 'lastUsedAt' },
    );
    t.ok(used, 'lastUsedAt recorded');

    const tampered = `${r.json.key.slice(0, -1)}${r.json.key.endsWith('A') ? 'B' : 'A'}`;
    t.same(await resolve(tampered), { valid: false, reason: 'unknown' });
    t.same(await resolve('sd_nope'), { valid: false, reason: 'malformed' });
    t.same(await resolve(`sd_key_${'0'.repeat(26)}_${'a'.repeat(43)}`), { valid: false, reason: 'unknown' });

    const list = await run(['api-keys', 'list', '--owner', 'agent@example.com', '--json']);
    t.equal(list.code, 0);
    t.equal(list.json.keys.length, 1);
    t.notOk('key' in list.json.keys[0]);
    t.notOk(JSON.stringify(list.json).includes('secretHash'));
    const all = await run(['api-keys', 'list']);
    t.match(all.stdout, /CI/);

    const expiring = await run([
      'api-keys',
      'create',
      '--owner',
      'agent@example.com',
      '--name',
      'short',
      '--scopes',
      'requests:read',
      '--expires-in',
      '60s',
      '--json',
    ]);
    h.advance(61_000);
    t.same(await resolve(expiring.json.key), { valid: false, reason: 'expired' });
    h.advance(-61_000);
    // Shorter than API_KEY_MIN_LIFETIME_SECONDS (60 by default): refused, nothing created.
    const tooShort = await run([
      'api-keys',
      'create',
      '--owner',
      'agent@example.com',
      '--name',
      'too short',
      '--scopes',
      'requests:read',
      '--expires-in',
      '59s',
      '--json',
    ]);
    t.equal(tooShort.code, 1);
    t.match(JSON.parse(tooShort.stderr), {
      error: { code: 'VALIDATION_ERROR', message: /expiresIn.*at least 60 seconds/ },
    });
    const named = await run(['api-keys', 'list', '--owner', 'agent@example.com', '--json']);
    t.notOk(
      named.json.keys.some((k: { name: string }) => k.name === 'too short'),
      'not created',
    );

    const rev = await run(['api-keys', 'revoke', r.json.id, '--json', '--yes']);
    t.equal(rev.code, 0, rev.stderr);
    t.match(rev.json, { id: r.json.id, alreadyRevoked: false });
    t.same(await resolve(r.json.key), { valid: false, reason: 'revoked' });
    await h.waitForNotice(
      (n) => n.kind === 'api_key_revoked' && n.keyId === r.json.id && n.userId === agentId,
    );
    const ev = await h.waitForEvent(
      (e) => e.type === 'system.config_changed' && e.resourceId === r.json.id && !!e.changes?.revokedAt,
    );
    t.equal(ev.metadata.source, 'cli');
    const unknown = await run(['api-keys', 'revoke', 'key_nope', '--yes']);
    t.equal(unknown.code, 1);
    const noId = await run(['api-keys', 'revoke']);
    t.equal(noId.code, 2);
  });

  await t.test('deactivating the owner revokes the key at once, for good', async (t) => {
    const r = await run([
      'api-keys',
      'create',
      '--owner',
      'agent@example.com',
      '--name',
      'live',
      '--scopes',
      'requests:read',
      '--json',
    ]);
    t.equal((await resolve(r.json.key)).valid, true);
    const admin = await h.headers('admin');
    const res = await h.app.inject({ method: 'DELETE', url: `/v1/users/${agentId}`, headers: admin });
    t.equal(res.statusCode, 200);
    t.same(await resolve(r.json.key), { valid: false, reason: 'revoked' });
    await h.waitForNotice((n) => n.kind === 'user_deactivated' && n.userId === agentId);
    const inactiveOwner = await run([
      'api-keys',
      'create',
      '--owner',
      'agent@example.com',
      '--name',
      'x',
      '--scopes',
      'requests:read',
    ]);
    t.equal(inactiveOwner.code, 1);
    t.match(inactiveOwner.stderr, /inactive/);
    await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${agentId}`,
      headers: admin,
      payload: { status: 'active' },
    });
    t.same(await resolve(r.json.key), { valid: false, reason: 'revoked' }, 'reactivation revives no key');
    t.ok(body(await h.app.inject({ method: 'GET', url: `/v1/users/${agentId}`, headers: admin })).data);
  });

  await t.test('settings ip-allowlist and getSettings RPC', async (t) => {
    let r = await run(['settings', 'ip-allowlist', 'set', '203.0.113.0/24,198.51.100.9', '--json']);
    t.equal(r.code, 0, r.stderr);
    t.same(r.json, { globalAllowlist: ['203.0.113.0/24', '198.51.100.9'] });
    t.same(await callRpc(h.nc, h.names.rpc.getSettings, {}, callerOf('getSettings')), {
      globalAllowlist: ['203.0.113.0/24', '198.51.100.9'],
    });
    await h.waitForNotice((n) => n.kind === 'settings_changed');
    const ev = await h.waitForEvent(
      (e) => e.type === 'system.config_changed' && e.resourceId === 'settings.ip_allowlist',
    );
    t.same(ev.changes?.ipAllowlist, { from: [], to: ['203.0.113.0/24', '198.51.100.9'] });
    r = await run(['settings', 'ip-allowlist', 'show']);
    t.match(r.stdout, /203\.0\.113\.0\/24/);
    r = await run(['settings', 'ip-allowlist', 'set', 'not-an-ip']);
    t.equal(r.code, 2);
    r = await run(['settings', 'ip-allowlist', 'clear', '--json', '--yes']);
    t.same(r.json, { globalAllowlist: [] });
  });

  await t.test('oauth-clients create and the getUser/getGroup/getOAuthClient RPCs', async (t) => {
    let r = await run([
      'oauth-clients',
      'create',
      '--name',
      'Web',
      '--redirect-uri',
      'https://app.example.com/cb',
      '--redirect-uri',
      'http://127.0.0.1:9999/cb',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.json, {
      client_id: /^cli_/,
      client_secret: /^[A-Za-z0-9_-]{43}$/,
      redirect_uris: ['https://app.example.com/cb', 'http://127.0.0.1:9999/cb'],
      plan: 'standard',
    });
    const info = await callRpc(
      h.nc,
      h.names.rpc.getOAuthClient,
      { id: r.json.client_id },
      callerOf('getOAuthClient'),
    );
    t.same(info, {
      found: true,
      client: { clientId: r.json.client_id, name: 'Web', plan: 'standard', limits: null },
    });
    r = await run([
      'oauth-clients',
      'create',
      '--name',
      'SPA',
      '--redirect-uri',
      'https://spa.example.com/cb',
      '--public',
      '--json',
    ]);
    t.equal(r.code, 0);
    t.notOk('client_secret' in r.json);
    r = await run([
      'oauth-clients',
      'create',
      '--name',
      'Bad',
      '--redirect-uri',
      'http://evil.example.com/cb',
    ]);
    t.equal(r.code, 1);
    t.match(r.stderr, /https/);
    r = await run(['oauth-clients', 'create', '--name', 'Bad']);
    t.equal(r.code, 2);
    t.same(await callRpc(h.nc, h.names.rpc.getOAuthClient, { id: 'cli_nope' }, callerOf('getOAuthClient')), {
      found: false,
    });
    const user = await callRpc<{ id: string }, { found: boolean; user?: { email: string } }>(
      h.nc,
      h.names.rpc.getUser,
      { id: agentId },
      callerOf('getUser'),
    );
    t.match(user, { found: true, user: { email: 'agent@example.com', status: 'active' } });
    t.same(await callRpc(h.nc, h.names.rpc.getUser, { id: 'usr_nope' }, callerOf('getUser')), {
      found: false,
    });
    const groups = body(
      await h.app.inject({ method: 'GET', url: '/v1/groups', headers: await h.headers('admin') }),
    ).data.groups;
    const group = await callRpc(h.nc, h.names.rpc.getGroup, { id: groups[0].id }, callerOf('getGroup'));
    t.same(group, { found: true, group: { id: groups[0].id, name: 'Billing', deleted: false } });
  });

  await t.test('with NATS down the command still succeeds; the service relay publishes later', async (t) => {
    const deadNats = `nats://127.0.0.1:${await freePort()}`;
    const r = await deskctl({ ...h.cliEnv, NATS_URL: deadNats }, [
      'groups',
      'create',
      '--name',
      'Offline',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stderr, /warning: NATS unavailable/);
    // Left pending by another process: the relay's sweep finds it (a full one on idle(); the
    // minute-by-minute sweeps would find it a couple of minutes later).
    await h.relay.idle();
    await h.waitForEvent(
      (e) => e.type === 'system.config_changed' && e.resourceId === r.json.id,
      'relayed event',
    );
  });
});
