import { freePort } from '@support-desk/platform/testing';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import t from 'tap';
import { cliContext } from '../src/use-cases/deps.js';
import { createOAuthClient } from '../src/use-cases/oauth-clients.js';
import { createUser } from '../src/use-cases/users.js';
import { rotateDevSigningKey } from '../src/oauth/keys.js';
import { composeService } from '../src/composition.js';
import { harness } from './helpers.js';
import { authorizeThroughForms, FormBrowser, hidden } from './oauth-flow.js';

const insecure = { [oauth.allowInsecureRequests]: true };

t.test('OAuth 2.0 authorization server', async (t) => {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const h = await harness(t, { OAUTH_ISSUER: issuer, LOGIN_MAX_FAILURES_PER_ACCOUNT: '3' });
  await h.app.listen({ port, host: '127.0.0.1' });
  const ctx = cliContext();
  const password = 'correct horse battery staple';
  const alice = await createUser(h.deps, ctx, {
    email: 'alice@example.com',
    name: 'Alice',
    role: 'agent',
    password,
  });
  const redirectUri = 'http://127.0.0.1:9/callback';
  const web = await createOAuthClient(h.deps, ctx, { name: 'Web App', redirectUris: [redirectUri] });
  const spa = await createOAuthClient(h.deps, ctx, {
    name: 'SPA',
    redirectUris: [redirectUri],
    isPublic: true,
  });
  const as = await oauth.processDiscoveryResponse(
    new URL(issuer),
    await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oauth2', ...insecure }),
  );
  const webClient: oauth.Client = { client_id: web.client_id };
  const webAuth = oauth.ClientSecretPost(web.client_secret!);
  const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));

  const authorizeUrl = async (over: Record<string, string | null> = {}, clientId = web.client_id) => {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    const params: Record<string, string | null> = {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'requests:read requests:write',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...over,
    };
    for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
    return { url: url.toString(), verifier, state };
  };

  /** Code + PKCE flow through the forms, redeemed with oauth4webapi. */
  const codeFlow = async (browser = new FormBrowser(issuer)) => {
    const { url, verifier, state } = await authorizeUrl();
    const callback = await authorizeThroughForms(browser, url, { email: 'alice@example.com', password });
    const params = oauth.validateAuthResponse(as, webClient, callback, state);
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      webClient,
      webAuth,
      params,
      redirectUri,
      verifier,
      insecure,
    );
    return {
      tokens: await oauth.processAuthorizationCodeResponse(as, webClient, res),
      params,
      verifier,
      browser,
    };
  };

  const tokenError = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError) return { error: err.error, status: err.status };
      if (err instanceof oauth.WWWAuthenticateChallengeError) {
        // HTTP Basic failures carry a challenge; the body is still the RFC 6749 error.
        const body = (await err.response.json().catch(() => ({}))) as { error?: string };
        return { error: body.error ?? 'challenge', status: err.status };
      }
      throw err;
    }
    throw new Error('expected an OAuth error');
  };

  await t.test('metadata and JWKS', async (t) => {
    t.equal(as.issuer, issuer);
    t.same(as.code_challenge_methods_supported, ['S256']);
    t.equal(as.token_endpoint, `${issuer}/oauth/token`);
    const res = await fetch(`${issuer}/.well-known/jwks.json`);
    const body = (await res.json()) as { keys: { kid: string; d?: string; alg: string }[] };
    t.equal(body.keys.length, 1);
    t.notOk(body.keys[0].d, 'no private material');
    t.equal(body.keys[0].alg, 'ES256');
  });

  let first: Awaited<ReturnType<typeof codeFlow>>;
  await t.test('authorization code + PKCE issues an RFC 9068 access token', async (t) => {
    first = await codeFlow();
    const { tokens } = first;
    t.equal(tokens.token_type.toLowerCase(), 'bearer');
    t.equal(tokens.expires_in, 3600);
    t.equal(tokens.scope, 'requests:read requests:write');
    t.ok(tokens.refresh_token);
    const header = decodeProtectedHeader(tokens.access_token);
    t.equal(header.typ, 'at+jwt');
    t.equal(header.alg, 'ES256');
    t.ok(header.kid);
    const { payload } = await jwtVerify(tokens.access_token, jwks, {
      issuer,
      audience: 'support-desk-api',
      typ: 'at+jwt',
    });
    t.equal(payload.sub, alice.id);
    t.equal(payload.client_id, web.client_id);
    t.equal(payload.scope, 'requests:read requests:write');
    t.ok(payload.jti && payload.iat && payload.exp);
    t.equal(payload.exp! - payload.iat!, 3600);
    const login = await h.waitForEvent((e) => e.type === 'user.login' && e.resourceId === alice.id);
    t.equal(login.metadata.source, 'oauth');
    t.equal(login.actor.id, alice.id);
    t.equal(login.ipAddress, '127.0.0.1');
    const user = await h.stored.users.findById(alice.id).lean();
    t.ok(user?.lastLoginAt);
  });

  await t.test('the session is reused: a second authorization goes straight to consent', async (t) => {
    const { url } = await authorizeUrl();
    const page = await first.browser.get(url);
    t.equal(page.status, 200);
    t.match(page.html, /value="approve"/);
    t.match(page.html, /requests:write/);
    t.match(page.headers.get('x-frame-options') ?? '', /DENY/);
    const session = [...first.browser.cookies.keys()];
    t.ok(session.includes('sd_session') && session.includes('sd_csrf'));
  });

  await t.test('refresh rotates; reusing a rotated token revokes the family', async (t) => {
    const r1 = first.tokens.refresh_token!;
    const res = await oauth.refreshTokenGrantRequest(as, webClient, webAuth, r1, insecure);
    const second = await oauth.processRefreshTokenResponse(as, webClient, res);
    t.not(second.refresh_token, r1, 'rotated');
    t.ok(second.access_token);
    const reuse = await tokenError(
      oauth
        .refreshTokenGrantRequest(as, webClient, webAuth, r1, insecure)
        .then((r) => oauth.processRefreshTokenResponse(as, webClient, r)),
    );
    t.same(reuse, { error: 'invalid_grant', status: 400 });
    const after = await tokenError(
      oauth
        .refreshTokenGrantRequest(as, webClient, webAuth, second.refresh_token!, insecure)
        .then((r) => oauth.processRefreshTokenResponse(as, webClient, r)),
    );
    t.equal(after.error, 'invalid_grant', 'the whole family is revoked');
    const { payload } = await jwtVerify(second.access_token, jwks, { issuer });
    await h.waitForNotice(
      (n) => n.kind === 'oauth_grant_revoked' && n.keyId === payload.gid && n.userId === alice.id,
    );
  });

  await t.test('a code is single-use and its reuse revokes the tokens issued from it', async (t) => {
    const { tokens, params, verifier } = await codeFlow();
    const again = await tokenError(
      oauth
        .authorizationCodeGrantRequest(as, webClient, webAuth, params, redirectUri, verifier, insecure)
        .then((r) => oauth.processAuthorizationCodeResponse(as, webClient, r)),
    );
    t.same(again, { error: 'invalid_grant', status: 400 });
    const refresh = await tokenError(
      oauth
        .refreshTokenGrantRequest(as, webClient, webAuth, tokens.refresh_token!, insecure)
        .then((r) => oauth.processRefreshTokenResponse(as, webClient, r)),
    );
    t.equal(refresh.error, 'invalid_grant');
  });

  /** A fresh code from the forms (session reused), not yet redeemed. */
  const freshCode = async () => {
    const { url, verifier, state } = await authorizeUrl();
    const callback = await authorizeThroughForms(first.browser, url, {
      email: 'alice@example.com',
      password,
    });
    return { params: oauth.validateAuthResponse(as, webClient, callback, state), verifier };
  };
  const redeem = (params: URLSearchParams, verifier: string, uri = redirectUri, auth = webAuth) =>
    tokenError(
      oauth
        .authorizationCodeGrantRequest(as, webClient, auth, params, uri, verifier, insecure)
        .then((r) => oauth.processAuthorizationCodeResponse(as, webClient, r)),
    );

  await t.test('wrong redirect_uri, wrong secret, wrong verifier, expired code', async (t) => {
    let c = await freshCode();
    t.same(await redeem(c.params, c.verifier, 'http://127.0.0.1:9/other'), {
      error: 'invalid_grant',
      status: 400,
    });
    c = await freshCode();
    t.same(await redeem(c.params, c.verifier, redirectUri, oauth.ClientSecretPost('not-the-secret')), {
      error: 'invalid_client',
      status: 401,
    });
    const basic = await tokenError(
      oauth
        .authorizationCodeGrantRequest(
          as,
          webClient,
          oauth.ClientSecretBasic('wrong'),
          c.params,
          redirectUri,
          c.verifier,
          insecure,
        )
        .then((r) => oauth.processAuthorizationCodeResponse(as, webClient, r)),
    );
    t.same(basic, { error: 'invalid_client', status: 401 });
    t.same(await redeem(c.params, oauth.generateRandomCodeVerifier()), {
      error: 'invalid_grant',
      status: 400,
    });
    c = await freshCode();
    h.advance(61_000);
    t.same(
      await redeem(c.params, c.verifier),
      { error: 'invalid_grant', status: 400 },
      'code lifetime is 60 s',
    );
    h.advance(-61_000);
    c = await freshCode();
    const ok = await oauth
      .authorizationCodeGrantRequest(
        as,
        webClient,
        oauth.ClientSecretBasic(web.client_secret!),
        c.params,
        redirectUri,
        c.verifier,
        insecure,
      )
      .then((r) => oauth.processAuthorizationCodeResponse(as, webClient, r));
    t.ok(ok.access_token, 'client_secret_basic works');
  });

  await t.test('authorize refuses what it must, without redirecting to unregistered URIs', async (t) => {
    const browser = first.browser;
    const expectPage = async (over: Record<string, string | null>, clientId?: string) => {
      const page = await browser.get((await authorizeUrl(over, clientId)).url);
      t.equal(page.status, 400, JSON.stringify(over));
      t.equal(page.location, null);
      t.match(page.html, /Authorization error/);
    };
    await expectPage({ redirect_uri: 'http://127.0.0.1:9/callback/' });
    await expectPage({ redirect_uri: 'http://127.0.0.1:9/Callback' });
    await expectPage({ redirect_uri: 'http://127.0.0.1:9/callback?x=1' });
    await expectPage({ redirect_uri: 'https://evil.example/callback' });
    await expectPage({ redirect_uri: null });
    await expectPage({}, 'cli_01h00000000000000000000000');
    await expectPage({ client_id: null });
    const expectRedirect = async (over: Record<string, string | null>, error: string, clientId?: string) => {
      const { url, state } = await authorizeUrl(over, clientId);
      const page = await browser.get(url);
      t.equal(page.status, 302, JSON.stringify(over));
      const loc = new URL(page.location!);
      t.equal(`${loc.origin}${loc.pathname}`, redirectUri);
      t.equal(loc.searchParams.get('error'), error, JSON.stringify(over));
      t.equal(loc.searchParams.get('state'), state);
    };
    await expectRedirect({ code_challenge_method: 'plain' }, 'invalid_request');
    await expectRedirect({ code_challenge_method: null }, 'invalid_request');
    await expectRedirect({ response_type: 'token' }, 'unsupported_response_type');
    await expectRedirect({ scope: 'requests:read everything' }, 'invalid_scope');
    await expectRedirect({ scope: null }, 'invalid_scope');
    await expectRedirect(
      { code_challenge: null, code_challenge_method: null },
      'invalid_request',
      spa.client_id,
    );
    await expectRedirect({ scope: 'users:write' }, 'invalid_scope'); // an agent cannot grant users:write
  });

  await t.test('confidential clients may skip PKCE; a public client with PKCE needs no secret', async (t) => {
    const { url, state } = await authorizeUrl({ code_challenge: null, code_challenge_method: null });
    const callback = await authorizeThroughForms(first.browser, url, {
      email: 'alice@example.com',
      password,
    });
    const params = oauth.validateAuthResponse(as, webClient, callback, state);
    const tokens = await oauth
      .authorizationCodeGrantRequest(as, webClient, webAuth, params, redirectUri, oauth.nopkce, insecure)
      .then((r) => oauth.processAuthorizationCodeResponse(as, webClient, r));
    t.ok(tokens.access_token);
    const spaClient: oauth.Client = { client_id: spa.client_id };
    const p = await authorizeUrl({}, spa.client_id);
    const cb = await authorizeThroughForms(first.browser, p.url, { email: 'alice@example.com', password });
    const sp = oauth.validateAuthResponse(as, spaClient, cb, p.state);
    const pub = await oauth
      .authorizationCodeGrantRequest(as, spaClient, oauth.None(), sp, redirectUri, p.verifier, insecure)
      .then((r) => oauth.processAuthorizationCodeResponse(as, spaClient, r));
    t.ok(pub.access_token);
  });

  await t.test('token endpoint: unsupported grants and malformed requests', async (t) => {
    const post = async (body: string, contentType = 'application/x-www-form-urlencoded') => {
      const res = await fetch(`${issuer}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      return {
        status: res.status,
        body: (await res.json()) as { error: string },
        cache: res.headers.get('cache-control'),
      };
    };
    let r = await post(
      `grant_type=password&username=a&password=b&client_id=${web.client_id}&client_secret=${web.client_secret}`,
    );
    t.same([r.status, r.body.error], [400, 'unsupported_grant_type']);
    t.equal(r.cache, 'no-store');
    r = await post('grant_type=client_credentials');
    t.equal(r.body.error, 'unsupported_grant_type');
    r = await post('code=x');
    t.equal(r.body.error, 'invalid_request');
    r = await post(JSON.stringify({ grant_type: 'authorization_code' }), 'application/json');
    t.same([r.status, r.body.error], [400, 'invalid_request']);
    r = await post(
      `grant_type=authorization_code&code=nope&redirect_uri=${redirectUri}&client_id=${web.client_id}&client_secret=${web.client_secret}`,
    );
    t.equal(r.body.error, 'invalid_grant');
    r = await post(`grant_type=authorization_code&grant_type=refresh_token`);
    t.equal(r.body.error, 'invalid_request');
    r = await post(`grant_type=refresh_token&refresh_token=x&client_id=cli_unknown`);
    t.same([r.status, r.body.error], [401, 'invalid_client']);
  });

  await t.test('deny, revoke, logout', async (t) => {
    const d = await authorizeUrl();
    const denied = await authorizeThroughForms(
      first.browser,
      d.url,
      { email: 'alice@example.com', password },
      'deny',
    );
    t.equal(denied.searchParams.get('error'), 'access_denied');
    t.equal(denied.searchParams.get('state'), d.state);

    const { tokens } = await codeFlow(first.browser);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, webClient, webAuth, tokens.refresh_token!, insecure),
    );
    const refresh = await tokenError(
      oauth
        .refreshTokenGrantRequest(as, webClient, webAuth, tokens.refresh_token!, insecure)
        .then((r) => oauth.processRefreshTokenResponse(as, webClient, r)),
    );
    t.equal(refresh.error, 'invalid_grant');
    const other = await codeFlow(first.browser);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, webClient, webAuth, other.tokens.access_token, insecure),
    );
    const { payload } = await jwtVerify(other.tokens.access_token, jwks, { issuer });
    await h.waitForNotice((n) => n.kind === 'oauth_grant_revoked' && n.keyId === payload.gid);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, webClient, webAuth, 'garbage', insecure),
    );
    t.pass('unknown tokens are accepted silently (RFC 7009)');

    const page = await first.browser.get((await authorizeUrl()).url);
    const bad = await first.browser.post('/oauth/logout', { csrf_token: 'forged' });
    t.equal(bad.status, 403);
    const out = await first.browser.post('/oauth/logout', { csrf_token: hidden(page.html, 'csrf_token') });
    t.equal(out.status, 200);
    await h.waitForEvent((e) => e.type === 'user.logout' && e.resourceId === alice.id);
    const again = await first.browser.get((await authorizeUrl()).url);
    t.match(again.html, /action="\/oauth\/login"/, 'signed out: the login form is shown again');
  });

  await t.test('login: CSRF, throttling, inactive and external users', async (t) => {
    const browser = new FormBrowser(issuer);
    const page = await browser.get((await authorizeUrl()).url);
    const form = { csrf_token: hidden(page.html, 'csrf_token'), request: hidden(page.html, 'request') };
    const noCsrf = await browser.post('/oauth/login', {
      ...form,
      csrf_token: 'x',
      email: 'alice@example.com',
      password,
    });
    t.equal(noCsrf.status, 403);
    await createUser(h.deps, ctx, {
      email: 'ext@example.com',
      name: 'Ext',
      role: 'agent',
      identityProvider: 'okta',
    });
    const ext = await browser.post('/oauth/login', { ...form, email: 'ext@example.com', password });
    t.equal(ext.status, 403);
    t.match(ext.html, /signs in through okta/);
    const bob = await createUser(h.deps, ctx, {
      email: 'bob@example.com',
      name: 'Bob',
      role: 'viewer',
      password,
    });
    await h.app.inject({ method: 'DELETE', url: `/v1/users/${bob.id}`, headers: await h.headers('admin') });
    const inactive = await browser.post('/oauth/login', { ...form, email: 'bob@example.com', password });
    t.equal(inactive.status, 403);
    t.match(inactive.html, /deactivated/);
    for (let i = 0; i < 3; i++) {
      const wrong = await browser.post('/oauth/login', {
        ...form,
        email: 'alice@example.com',
        password: 'wrong password!!',
      });
      t.equal(wrong.status, 401);
      t.match(wrong.html, /Invalid email or password/);
    }
    const throttled = await browser.post('/oauth/login', { ...form, email: 'alice@example.com', password });
    t.equal(throttled.status, 429, 'even the right password is refused while throttled');
    t.match(throttled.html, /Too many failed sign-in attempts/);
    h.advance(16 * 60_000);
    const okAgain = await browser.post('/oauth/login', { ...form, email: 'alice@example.com', password });
    t.equal(okAgain.status, 303, 'the window passes');
    h.advance(-16 * 60_000);
  });

  await t.test('deactivating the user stops refresh', async (t) => {
    const { tokens } = await codeFlow(first.browser);
    await h.app.inject({ method: 'DELETE', url: `/v1/users/${alice.id}`, headers: await h.headers('admin') });
    const refresh = await tokenError(
      oauth
        .refreshTokenGrantRequest(as, webClient, webAuth, tokens.refresh_token!, insecure)
        .then((r) => oauth.processRefreshTokenResponse(as, webClient, r)),
    );
    t.equal(refresh.error, 'invalid_grant');
    await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${alice.id}`,
      headers: await h.headers('admin'),
      payload: { status: 'active' },
    });
  });

  await t.test('key rotation keeps the old kid verifiable', async (t) => {
    const before = (await (await fetch(`${issuer}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[];
    };
    const { kid } = await rotateDevSigningKey(h.config, new Date());
    h.advance(6000); // past the keyring's file re-check interval
    await new Promise((r) => setTimeout(r, 5100));
    const { tokens } = await codeFlow(first.browser);
    t.equal(decodeProtectedHeader(tokens.access_token).kid, kid, 'the new key signs');
    const after = (await (await fetch(`${issuer}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[];
    };
    t.same(after.keys.map((k) => k.kid).sort(), [before.keys[0].kid, kid].sort(), 'old kid still published');
  });

  await t.test('cookies are Secure behind an https issuer', async (t) => {
    const httpsIssuer = 'https://desk.example.com';
    const { app } = await composeService({
      config: { ...h.config, OAUTH_ISSUER: httpsIssuer },
      conn: h.conn,
      nc: h.nc,
      names: h.names,
      logger: h.deps.logger,
    });
    t.teardown(() => app.close());
    const { url } = await authorizeUrl();
    const page = await app.inject({ method: 'GET', url: url.slice(issuer.length) });
    t.equal(page.statusCode, 200);
    const csrfCookie = String(page.headers['set-cookie']);
    t.match(csrfCookie, /sd_csrf=.*; Path=\/oauth; HttpOnly; SameSite=Lax; Secure/);
    const csrf = /sd_csrf=([^;]+)/.exec(csrfCookie)![1];
    const login = await app.inject({
      method: 'POST',
      url: '/oauth/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `sd_csrf=${csrf}` },
      payload: new URLSearchParams({
        csrf_token: decodeURIComponent(csrf),
        request: hidden(page.body, 'request'),
        email: 'alice@example.com',
        password,
      }).toString(),
    });
    t.equal(login.statusCode, 303);
    t.match(
      String(login.headers['set-cookie']),
      /sd_session=[^;]+; Path=\/oauth; HttpOnly; SameSite=Lax; Secure; Max-Age=43200/,
    );
    const meta = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    t.equal(meta.json().issuer, httpsIssuer);
  });
});
