import { jetstream } from '@nats-io/jetstream';
import { newId } from '@support-desk/contracts';
import { encodeJson, messageSigner } from '@support-desk/platform/messaging';
import { eventually, freePort, publishSigned } from '@support-desk/platform/testing';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { base64url, generateKeyPair, SignJWT } from 'jose';
import t, { type Test } from 'tap';
import { AUDIENCE, bearer, type EchoCall, harness, ISSUER, testRedis } from './helpers.js';

t.test('authentication matrix', async (t) => {
  const h = await harness(t, { TRUSTED_PROXIES: '10.9.9.9' });
  const { app } = await h.gateway();
  // As identity's outbox relay publishes them: signed by identity.
  const notice = (body: Record<string, unknown>) =>
    publishSigned(h.nc, h.names.credentialNotices, encodeJson({ at: new Date().toISOString(), ...body }), {
      as: 'identity',
    });
  const get = (headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
    app.inject({ method: 'GET', url: '/v1/me', headers, ...extra });
  const expect401 = async (t: Test, headers: Record<string, string>, what: string) => {
    const res = await get(headers);
    t.equal(res.statusCode, 401, what);
    t.equal(res.json().error.code, 'UNAUTHORIZED', what);
    t.match(res.headers['www-authenticate'], /^Bearer/, `${what}: WWW-Authenticate`);
    t.notOk(res.headers['x-ratelimit-remaining'], `${what}: no quota consumed`);
    return res;
  };

  const owner = h.identity.addUser('agent');
  const key = h.identity.addKey(owner, { scopes: ['requests:read', 'users:read'] });

  t.test('API keys', async (t) => {
    await expect401(t, {}, 'no header');
    await expect401(t, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 'wrong scheme');
    await expect401(t, { authorization: 'Bearer' }, 'empty bearer');
    await expect401(t, bearer('sd_key_00000000000000000000000000_nope'), 'unknown key');
    await expect401(t, bearer('sd_garbage'), 'malformed key');
    await expect401(t, bearer('not-a-credential'), 'neither key nor token');
    await expect401(
      t,
      bearer(h.identity.addKey(owner, { state: 'expired' }).raw),
      'expired key (identity says)',
    );
    const lapsed = h.identity.addKey(owner, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    await expect401(t, bearer(lapsed.raw), 'expired key (expiresAt in the past)');
    await expect401(t, bearer(h.identity.addKey(owner, { state: 'revoked' }).raw), 'revoked key');
    const inactive = h.identity.addUser('admin', { status: 'inactive' });
    await expect401(t, bearer(h.identity.addKey(inactive).raw), 'inactive owner');

    const ok = await get(bearer(key.raw));
    t.equal(ok.statusCode, 200, 'valid key');
    const p = (ok.json().data as EchoCall).principal as {
      scopes: string[];
      credential: unknown;
      role: string;
    };
    t.same(p.scopes, ['requests:read', 'users:read']);
    t.same(p.credential, { type: 'api_key', id: key.keyId });
    t.equal(p.role, 'agent');
    t.equal(ok.headers['www-authenticate'], undefined);
  });

  t.test('resolutions are cached; a revocation notice drops the entry at once', async (t) => {
    const k = h.identity.addKey(owner);
    t.equal((await get(bearer(k.raw))).statusCode, 200);
    const before = h.identity.calls.resolveApiKey;
    for (let i = 0; i < 5; i++) t.equal((await get(bearer(k.raw))).statusCode, 200);
    t.equal(h.identity.calls.resolveApiKey, before, 'served from the cache');
    h.identity.keys.set(k.raw, { valid: false, reason: 'revoked' });
    t.equal((await get(bearer(k.raw))).statusCode, 200, 'still cached until the notice');
    await notice({ kind: 'api_key_revoked', keyId: k.keyId, userId: owner.id });
    await eventually(async () => (await get(bearer(k.raw))).statusCode === 401, {
      timeoutMs: 1000,
      what: 'revoked key refused within a second',
    });
    t.pass('revoked key refused within a second of the notice');
  });

  t.test('owner deactivated: the notice drops every cached key of the user', async (t) => {
    const user = h.identity.addUser('agent');
    const k = h.identity.addKey(user);
    t.equal((await get(bearer(k.raw))).statusCode, 200);
    h.identity.users.set(user.id, { ...user, status: 'inactive' });
    await notice({ kind: 'user_deactivated', userId: user.id });
    await eventually(async () => (await get(bearer(k.raw))).statusCode === 401, { timeoutMs: 1000 });
    t.pass('refused');
  });

  t.test('IP allowlist: per key and global, IPv4/IPv6/CIDR, forged X-Forwarded-For', async (t) => {
    const listed = h.identity.addKey(owner, { allowlist: ['203.0.113.0/24', '2001:db8::/32'] });
    const from = (ip: string, headers: Record<string, string> = {}) =>
      get({ ...bearer(listed.raw), ...headers }, { remoteAddress: ip });
    t.equal((await from('203.0.113.7')).statusCode, 200, 'IPv4 in CIDR');
    t.equal((await from('2001:db8::42')).statusCode, 200, 'IPv6 in CIDR');
    t.equal((await from('::ffff:203.0.113.9')).statusCode, 200, 'IPv4-mapped IPv6');
    const refused = await from('198.51.100.1');
    t.equal(refused.statusCode, 403, 'outside the list');
    t.equal(refused.json().error.code, 'FORBIDDEN');
    t.equal(
      (await from('198.51.100.1', { 'x-forwarded-for': '203.0.113.7' })).statusCode,
      403,
      'forged X-Forwarded-For from an untrusted peer is ignored',
    );
    t.equal(
      (await from('10.9.9.9', { 'x-forwarded-for': '203.0.113.7' })).statusCode,
      200,
      'X-Forwarded-For through a trusted proxy is used',
    );
    t.equal(
      (await from('10.9.9.9', { 'x-forwarded-for': '198.51.100.1' })).statusCode,
      403,
      'a disallowed client behind the trusted proxy is refused',
    );
    const single = h.identity.addKey(owner, { allowlist: ['192.0.2.5'] });
    t.equal((await get(bearer(single.raw), { remoteAddress: '192.0.2.5' })).statusCode, 200, 'exact address');
    t.equal((await get(bearer(single.raw), { remoteAddress: '192.0.2.6' })).statusCode, 403);

    // Global allowlist arrives with the resolution; settings_changed drops cached resolutions.
    const open = h.identity.addKey(owner);
    t.equal((await get(bearer(open.raw), { remoteAddress: '198.51.100.1' })).statusCode, 200);
    const tokenUser = h.identity.addUser('agent');
    const token = await h.jwks.sign({
      sub: tokenUser.id,
      client_id: h.identity.addClient(),
      scope: 'requests:read',
    });
    t.equal(
      (await get(bearer(token), { remoteAddress: '198.51.100.1' })).statusCode,
      200,
      'no list: tokens pass',
    );
    h.identity.globalAllowlist = ['192.0.2.0/24'];
    await notice({ kind: 'settings_changed' });
    await eventually(
      async () => (await get(bearer(open.raw), { remoteAddress: '198.51.100.1' })).statusCode === 403,
      { timeoutMs: 1000 },
    );
    t.equal(
      (await get(bearer(open.raw), { remoteAddress: '192.0.2.1' })).statusCode,
      200,
      'in the global list',
    );
    const refusedToken = await get(bearer(token), { remoteAddress: '198.51.100.1' });
    t.equal(refusedToken.statusCode, 403, 'the global list applies to OAuth access tokens too');
    t.match(refusedToken.json().error.message, /not allowed from this address/);
    t.equal(
      (await get(bearer(token), { remoteAddress: '192.0.2.1' })).statusCode,
      200,
      'a token from a listed address',
    );
    h.identity.globalAllowlist = [];
    await notice({ kind: 'settings_changed' });
    await eventually(
      async () => (await get(bearer(open.raw), { remoteAddress: '198.51.100.1' })).statusCode === 200,
      { timeoutMs: 1000 },
    );
  });

  t.test('OAuth access tokens', async (t) => {
    const user = h.identity.addUser('agent');
    const clientId = h.identity.addClient('professional');
    const claims = { sub: user.id, client_id: clientId, scope: 'requests:read users:read users:write' };
    const good = await h.jwks.sign(claims);
    const ok = await get(bearer(good));
    t.equal(ok.statusCode, 200, 'valid JWT');
    const p = (ok.json().data as EchoCall).principal as {
      scopes: string[];
      credential: unknown;
      userId: string;
    };
    t.same(p.scopes, ['requests:read', 'users:read'], 'token scopes ∩ role scopes');
    t.same(p.credential, { type: 'oauth', id: clientId });
    t.equal(p.userId, user.id);
    t.equal(ok.headers['x-ratelimit-limit'], '300', 'the client plan applies');

    const [head, body, sig] = good.split('.');
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    await expect401(t, bearer(`${head}.${body}.${flipped}`), 'tampered signature');
    const otherBody = base64url.encode(
      JSON.stringify({ ...JSON.parse(new TextDecoder().decode(base64url.decode(body))), scope: 'admin' }),
    );
    await expect401(t, bearer(`${head}.${otherBody}.${sig}`), 'tampered payload');
    const noneHead = base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }));
    await expect401(t, bearer(`${noneHead}.${body}.`), 'alg none');

    // HS256 "signed" with the public key (algorithm confusion).
    const published = (await h.jwks.addKey()).publicJwk;
    const pem = createPublicKey({ key: published as never, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    const hs = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: published.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(pem));
    await expect401(t, bearer(hs), 'HS256 signed with the public key');
    const jwkText = JSON.stringify(published);
    const hs2 = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: published.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(jwkText));
    await expect401(t, bearer(hs2), 'HS256 signed with the JWK text');

    await expect401(t, bearer(await h.jwks.sign(claims, { aud: 'someone-else' })), 'wrong aud');
    await expect401(t, bearer(await h.jwks.sign(claims, { iss: 'https://evil.example' })), 'wrong iss');
    await expect401(t, bearer(await h.jwks.sign(claims, { typ: 'JWT' })), 'wrong typ');
    await expect401(
      t,
      bearer(await h.jwks.sign(claims, { expiresIn: Math.floor(Date.now() / 1000) - 60 })),
      'expired',
    );
    const es384 = await generateKeyPair('ES384');
    const wrongAlg = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'ES384', typ: 'at+jwt', kid: 'x' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(es384.privateKey);
    await expect401(t, bearer(wrongAlg), 'algorithm not pinned');

    const unpublished = await h.jwks.addKey(false);
    const unknownKid = await h.jwks.sign(claims, { kid: unpublished.kid });
    await expect401(t, bearer(unknownKid), 'unknown kid');
    h.jwks.publish(unpublished.kid);
    t.equal((await get(bearer(unknownKid))).statusCode, 200, 'rotation picked up without restart');

    await expect401(t, bearer(await h.jwks.sign({ ...claims, client_id: 'cli_unknown' })), 'unknown client');
    await expect401(t, bearer(await h.jwks.sign({ ...claims, sub: 'usr_unknown' })), 'unknown user');
  });

  t.test('deactivated user: refused at once through the notice and the Redis deny-list', async (t) => {
    const user = h.identity.addUser('admin');
    const clientId = h.identity.addClient();
    const token = await h.jwks.sign({ sub: user.id, client_id: clientId, scope: 'admin' });
    t.equal((await get(bearer(token))).statusCode, 200);
    // Identity has not answered the new status yet (cached user): the notice alone must refuse.
    await notice({ kind: 'user_deactivated', userId: user.id });
    await eventually(async () => (await get(bearer(token))).statusCode === 401, { timeoutMs: 1000 });
    t.pass('refused after the notice');

    // A second replica that never saw the notice still refuses through Redis.
    const other = await h.gateway();
    const res = await other.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(token) });
    t.equal(res.statusCode, 401, 'another replica reads the deny-list');

    await notice({ kind: 'user_reactivated', userId: user.id });
    await eventually(async () => (await get(bearer(token))).statusCode === 200, { timeoutMs: 2000 });
    t.pass('reactivation lifts the deny-list entry');
  });

  t.test("only identity's notices count: a forged deactivation locks nobody out", async (t) => {
    const user = h.identity.addUser('admin');
    const token = await h.jwks.sign({ sub: user.id, client_id: h.identity.addClient(), scope: 'admin' });
    t.equal((await get(bearer(token))).statusCode, 200);
    const forged = encodeJson({ kind: 'user_deactivated', userId: user.id, at: new Date().toISOString() });
    await jetstream(h.nc).publish(h.names.credentialNotices, forged);
    await publishSigned(h.nc, h.names.credentialNotices, forged, { as: 'webhooks' });
    const stranger = messageSigner('identity', generateKeyPairSync('ed25519').privateKey);
    await jetstream(h.nc).publish(h.names.credentialNotices, forged, {
      headers: stranger.sign(h.names.credentialNotices, forged),
    });
    // Identity's next notice is read after them: once it is applied, they were read too.
    const k = h.identity.addKey(owner);
    t.equal((await get(bearer(k.raw))).statusCode, 200);
    h.identity.keys.set(k.raw, { valid: false, reason: 'revoked' });
    await notice({ kind: 'api_key_revoked', keyId: k.keyId, userId: owner.id });
    await eventually(async () => (await get(bearer(k.raw))).statusCode === 401, {
      what: "identity's notice",
    });
    t.equal(
      (await get(bearer(token))).statusCode,
      200,
      'unsigned, or signed by another service or key: ignored',
    );
    const other = await h.gateway();
    const res = await other.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(token) });
    t.equal(res.statusCode, 200, 'and nothing was written to the shared deny-list');
  });

  t.test('revoked OAuth grant: its tokens refused at once, here and on every replica', async (t) => {
    const user = h.identity.addUser('agent');
    const clientId = h.identity.addClient();
    const claims = { sub: user.id, client_id: clientId, scope: 'requests:read' };
    const revokedGrant = newId('oauthGrant');
    const otherGrant = newId('oauthGrant');
    const revoked = await h.jwks.sign({ ...claims, gid: revokedGrant });
    const sameGrantLater = await h.jwks.sign({ ...claims, gid: revokedGrant });
    const kept = await h.jwks.sign({ ...claims, gid: otherGrant });
    const noGid = await h.jwks.sign(claims);
    for (const token of [revoked, sameGrantLater, kept, noGid]) {
      t.equal((await get(bearer(token))).statusCode, 200, 'valid before the revocation');
    }

    await notice({ kind: 'oauth_grant_revoked', keyId: revokedGrant, userId: user.id });
    await eventually(async () => (await get(bearer(revoked))).statusCode === 401, {
      timeoutMs: 1000,
      what: 'token of the revoked grant refused within a second',
    });
    const res = await expect401(t, bearer(sameGrantLater), 'another token of the revoked grant');
    t.equal(res.json().error.message, 'The access token has been revoked');
    t.equal((await get(bearer(kept))).statusCode, 200, 'another grant of the same user still works');
    t.equal((await get(bearer(noGid))).statusCode, 200, 'a token without gid still works');

    // Identity's tokens live 2 h here, twice the gateway's DENY_LIST_TTL_SECONDS: the entry
    // must outlive the last of them, whatever the gateway's own setting.
    const longLived = newId('oauthGrant');
    const tokensExpireBy = new Date(Date.now() + 7200_000).toISOString();
    await notice({ kind: 'oauth_grant_revoked', keyId: longLived, userId: user.id, tokensExpireBy });
    const redis = testRedis(t);
    await redis.connect();
    const ttl = await eventually(
      async () => {
        const seconds = await redis.ttl(`${h.config.REDIS_KEY_PREFIX}deny:grant:${longLived}`);
        return seconds > 0 ? seconds : null;
      },
      { timeoutMs: 2000, what: 'the deny entry' },
    );
    t.ok(
      ttl > 7190 && ttl <= 7200 + h.config.OAUTH_CLOCK_TOLERANCE_SECONDS,
      `derived from the token lifetime: ${ttl} s`,
    );

    // A notice without tokensExpireBy (an older identity): at least DENY_LIST_TTL_SECONDS.
    const floor = await redis.ttl(`${h.config.REDIS_KEY_PREFIX}deny:grant:${revokedGrant}`);
    t.ok(
      floor > h.config.DENY_LIST_TTL_SECONDS - 60,
      `Redis entry lives ~DENY_LIST_TTL_SECONDS (${floor} s)`,
    );

    // A replica started after the notice (it never saw it) refuses through Redis.
    const other = await h.gateway();
    const call = (token: string) =>
      other.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(token) });
    t.equal((await call(revoked)).statusCode, 401, 'another replica reads the grant deny-list');
    t.equal((await call(kept)).statusCode, 200, 'and still admits the other grant');
    t.equal((await call(noGid)).statusCode, 200, 'and tokens without gid');
  });

  t.test('revoked OAuth grant with Redis unreachable: the replica that saw the notice refuses', async (t) => {
    const offline = await h.gateway({}, `redis://127.0.0.1:${await freePort()}`);
    const user = h.identity.addUser('agent');
    const grant = newId('oauthGrant');
    const token = await h.jwks.sign({ sub: user.id, client_id: h.identity.addClient(), gid: grant });
    const call = () => offline.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(token) });
    t.equal((await call()).statusCode, 200, 'deny-list unavailable: the token is admitted');
    await notice({ kind: 'oauth_grant_revoked', keyId: grant, userId: user.id });
    await eventually(async () => (await call()).statusCode === 401, { timeoutMs: 1000 });
    t.pass('refused within a second from the local entry');
  });

  t.test('verified tokens are cached: repeat calls do not re-fetch the JWKS', async (t) => {
    const user = h.identity.addUser('viewer');
    const token = await h.jwks.sign({
      sub: user.id,
      client_id: h.identity.addClient(),
      scope: 'requests:read',
    });
    t.equal((await get(bearer(token))).statusCode, 200);
    const fetches = h.jwks.fetches;
    const rpc = h.identity.calls.getUser;
    for (let i = 0; i < 5; i++) t.equal((await get(bearer(token))).statusCode, 200);
    t.equal(h.jwks.fetches, fetches);
    t.equal(h.identity.calls.getUser, rpc);
  });
});

t.test(
  'identity not answering: the last answer serves for CREDENTIAL_STALE_IF_ERROR_MS, never after a notice',
  async (t) => {
    const h = await harness(t);
    const short = { API_KEY_CACHE_TTL_MS: 50, USER_CACHE_TTL_MS: 50, CLIENT_CACHE_TTL_MS: 50 };
    const tolerant = (await h.gateway({ ...short, CREDENTIAL_STALE_IF_ERROR_MS: 60_000 })).app;
    const strict = (await h.gateway({ ...short, CREDENTIAL_STALE_IF_ERROR_MS: 0 })).app;
    // Two owners: a revocation notice drops every cached key of the revoked key's owner.
    const kept = h.identity.addKey(h.identity.addUser('agent'));
    const owner = h.identity.addUser('agent');
    const revoked = h.identity.addKey(owner);
    const get = (app: typeof strict, raw: string) =>
      app.inject({ method: 'GET', url: '/v1/me', headers: bearer(raw) });
    for (const app of [tolerant, strict])
      for (const k of [kept, revoked])
        t.equal((await get(app, k.raw)).statusCode, 200, 'resolved and cached');
    await publishSigned(
      h.nc,
      h.names.credentialNotices,
      encodeJson({
        at: new Date().toISOString(),
        kind: 'api_key_revoked',
        keyId: revoked.keyId,
        userId: owner.id,
      }),
      { as: 'identity' },
    );
    await new Promise((r) => setTimeout(r, 200)); // past every TTL, the notice applied
    h.stopIdentity();

    const served = await get(tolerant, kept.raw);
    t.equal(served.statusCode, 200, 'an expired entry serves while identity does not answer');
    t.equal(served.json().data.principal.credential.id, kept.keyId);
    const refused = await get(strict, kept.raw);
    t.equal(refused.statusCode, 503, 'with CREDENTIAL_STALE_IF_ERROR_MS=0: unavailable, as before');
    t.equal(refused.json().error.code, 'SERVICE_UNAVAILABLE');
    t.equal(
      (await get(tolerant, revoked.raw)).statusCode,
      503,
      'a revoked key left no entry to serve: refused until identity answers',
    );
  },
);
