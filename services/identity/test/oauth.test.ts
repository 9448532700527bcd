import { scryptSync } from 'node:crypto';
import { FORWARDED_HEADER } from '@support-desk/contracts';
import { createForwardedSigner } from '@support-desk/platform/core';
import { freePort, testPrincipalKeys } from '@support-desk/platform/testing';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import t from 'tap';
import { cliContext } from '../src/use-cases/deps.js';
import { createOAuthClient } from '../src/use-cases/oauth-clients.js';
import { createApiKey, resolveApiKey } from '../src/use-cases/api-keys.js';
import { USED_REFRESH_KEPT } from '../src/use-cases/token-grants.js';
import { createUser, setPassword } from '../src/use-cases/users.js';
import { rotateDevSigningKey } from '../src/oauth/keys.js';
import { composeService } from '../src/composition.js';
import { harness } from './helpers.js';
import { authorizeThroughForms, FormBrowser, formOf, hidden, HOSTILE, shownEscaped } from './oauth-flow.js';

const insecure = { [oauth.allowInsecureRequests]: true };

t.test('OAuth 2.0 authorization server', async (t) => {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const h = await harness(t, { OAUTH_ISSUER: issuer, LOGIN_FAILURES_BEFORE_BACKOFF: '3' });
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

  await t.test("the consent page shows a client's name as text", async (t) => {
    const hostile = await createOAuthClient(h.deps, ctx, { name: HOSTILE, redirectUris: [redirectUri] });
    const { url } = await authorizeUrl({}, hostile.client_id);
    const page = await first.browser.get(url);
    t.equal(page.status, 200);
    t.match(page.html, /value="approve"/, 'the consent page');
    shownEscaped(t, page.html, 'the client name');
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

  await t.test(
    'PKCE is required of confidential clients too; a public client with PKCE needs no secret',
    async (t) => {
      const { url } = await authorizeUrl({ code_challenge: null, code_challenge_method: null });
      const refused = await first.browser.get(url);
      t.equal(refused.status, 302, 'an authorization request without a code_challenge is refused');
      const back = new URL(refused.location!);
      t.equal(back.searchParams.get('error'), 'invalid_request');
      t.match(back.searchParams.get('error_description'), /PKCE/);
      const spaClient: oauth.Client = { client_id: spa.client_id };
      const p = await authorizeUrl({}, spa.client_id);
      const cb = await authorizeThroughForms(first.browser, p.url, { email: 'alice@example.com', password });
      const sp = oauth.validateAuthResponse(as, spaClient, cb, p.state);
      const pub = await oauth
        .authorizationCodeGrantRequest(as, spaClient, oauth.None(), sp, redirectUri, p.verifier, insecure)
        .then((r) => oauth.processAuthorizationCodeResponse(as, spaClient, r));
      t.ok(pub.access_token);
    },
  );

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
    // Fields and cookies named like Object.prototype's members are fields like any other: never
    // an assignment to a prototype (a 500 under --disable-proto=throw), never an inherited value.
    r = await post(
      '__proto__=x&__proto__=y&constructor=z&toString=w&grant_type=refresh_token&refresh_token=x&client_id=cli_unknown',
    );
    t.same([r.status, r.body.error], [401, 'invalid_client'], 'form fields named __proto__, constructor');
    const page = await fetch(`${issuer}/settings/login`, {
      headers: { cookie: '__proto__=x; constructor=y; toString=z' },
    });
    t.equal(page.status, 200, 'cookies named __proto__, constructor');
    // A Basic client name or secret with malformed percent-encoding (RFC 6749 §2.3.1 encodes
    // them) is a failed client authentication, never a 500.
    for (const credentials of ['%zz:secret', `${web.client_id}:%E0%A4%A`]) {
      const res = await fetch(`${issuer}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
        },
        body: 'grant_type=refresh_token&refresh_token=x',
      });
      t.same(
        [res.status, ((await res.json()) as { error: string }).error],
        [401, 'invalid_client'],
        `Basic ${credentials}`,
      );
      t.match(res.headers.get('www-authenticate'), /^Basic/, 'with the Basic challenge');
    }
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

  await t.test(
    'login: CSRF, and no answer tells an unknown, SSO or password-less account apart',
    async (t) => {
      const browser = new FormBrowser(issuer, '198.51.100.1');
      const page = await browser.get((await authorizeUrl()).url);
      const form = formOf(page.html);
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
      await createUser(h.deps, ctx, { email: 'nopass@example.com', name: 'No Pass', role: 'agent' });
      const answers = [];
      for (const email of [
        'nobody@example.com',
        'ext@example.com',
        'nopass@example.com',
        'alice@example.com',
      ]) {
        const res = await browser.post('/oauth/login', {
          ...form,
          email,
          password: 'wrong password!!',
        });
        answers.push({
          status: res.status,
          error: /<p class="error"[^>]*>([^<]*)</.exec(res.html)?.[1] ?? res.html,
        });
      }
      t.equal(
        new Set(answers.map((a) => JSON.stringify(a))).size,
        1,
        'one status and one message for all four',
      );
      t.equal(answers[0].status, 401);
      t.notMatch(JSON.stringify(answers), /okta|administrator|deactivated/);
      const bob = await createUser(h.deps, ctx, {
        email: 'bob@example.com',
        name: 'Bob',
        role: 'viewer',
        password,
      });
      await h.app.inject({ method: 'DELETE', url: `/v1/users/${bob.id}`, headers: await h.headers('admin') });
      const inactive = await browser.post('/oauth/login', { ...form, email: 'bob@example.com', password });
      t.equal(inactive.status, 403, 'only the right password learns that an account is deactivated');
      t.match(inactive.html, /deactivated/);
    },
  );

  await t.test(
    'login throttling slows one account from one address, never locks the owner out',
    async (t) => {
      const attacker = new FormBrowser(issuer, '203.0.113.66');
      const page = await attacker.get((await authorizeUrl()).url);
      const form = formOf(page.html);
      for (let i = 0; i < 3; i++) {
        const wrong = await attacker.post('/oauth/login', {
          ...form,
          email: 'alice@example.com',
          password: 'wrong password!!',
        });
        t.equal(wrong.status, 401, `failure ${i + 1} is answered, not throttled`);
      }
      const throttled = await attacker.post('/oauth/login', {
        ...form,
        email: 'alice@example.com',
        password,
      });
      t.equal(throttled.status, 429, 'from that address even the right password waits out the backoff');
      t.match(throttled.html, /Too many failed sign-in attempts/);
      t.equal(throttled.headers.get('retry-after'), '30', 'the first backoff');

      const owner = new FormBrowser(issuer, '192.0.2.7');
      const ownerPage = await owner.get((await authorizeUrl()).url);
      const ownerForm = {
        ...formOf(ownerPage.html),
      };
      const signedIn = await owner.post('/oauth/login', {
        ...ownerForm,
        email: 'alice@example.com',
        password,
      });
      t.equal(signedIn.status, 303, 'the owner, from another address, signs in');
      const login = await h.waitForEvent((e) => e.type === 'user.login' && e.ipAddress === '192.0.2.7');
      t.equal(login.resourceId, alice.id, 'the login event records the address the gateway asserted');

      h.advance(31_000);
      t.equal(
        (
          await attacker.post('/oauth/login', {
            ...form,
            email: 'alice@example.com',
            password: 'wrong password!!',
          })
        ).status,
        401,
        'after the backoff, one more try',
      );
      const doubled = await attacker.post('/oauth/login', { ...form, email: 'alice@example.com', password });
      t.equal(doubled.headers.get('retry-after'), '60', 'each further failure doubles the backoff');
      h.advance(61_000);
      t.equal(
        (await attacker.post('/oauth/login', { ...form, email: 'alice@example.com', password })).status,
        303,
      );
      h.advance(-92_000);
    },
  );

  await t.test(
    'one address failing across accounts waits out the window; an IPv6 /64 is one address',
    async (t) => {
      const [a, b] = [
        new FormBrowser(issuer, '2001:db8:1:2::a'),
        new FormBrowser(issuer, '2001:db8:1:2:ffff::b'),
      ];
      const page = await a.get((await authorizeUrl()).url);
      const form = formOf(page.html);
      b.cookies.set('sd_csrf', a.cookies.get('sd_csrf')!);
      for (let i = 0; i < 20; i++) {
        const res = await (i % 2 ? b : a).post('/oauth/login', {
          ...form,
          email: `u${i}@example.com`,
          password: 'wrong password!!',
        });
        t.equal(res.status, 401);
      }
      const stuffed = await b.post('/oauth/login', { ...form, email: 'alice@example.com', password });
      t.equal(stuffed.status, 429, 'the 21st try from the /64, whichever address in it');
      const other = new FormBrowser(issuer, '2001:db8:1:3::a');
      const otherPage = await other.get((await authorizeUrl()).url);
      const ok = await other.post('/oauth/login', {
        ...formOf(otherPage.html),
        email: 'alice@example.com',
        password,
      });
      t.equal(ok.status, 303, 'the next /64 is another address');
    },
  );

  await t.test('the client address comes only from an assertion the gateway signed', async (t) => {
    const forged = createForwardedSigner(testPrincipalKeys().signingKey)(
      { clientIp: '192.0.2.99', userAgent: null },
      { audience: 'identity', method: 'GET', url: '/.well-known/jwks.json' },
    );
    const res = await fetch(`${issuer}/.well-known/jwks.json`, { headers: { [FORWARDED_HEADER]: forged } });
    t.equal(res.status, 401, 'signed with another key: refused');
    // A direct caller naming a new address in X-Forwarded-For on every try is still one address
    // (its socket's): after the free failures it is throttled all the same.
    const direct = new FormBrowser(issuer);
    const form = formOf((await direct.get((await authorizeUrl()).url)).html);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await direct.post(
        '/oauth/login',
        { ...form, email: 'xff@example.com', password: 'wrong password!!' },
        { 'x-forwarded-for': `192.0.2.${100 + i}` },
      );
      statuses.push(res.status);
    }
    t.same(statuses, [401, 401, 401, 429], 'X-Forwarded-For is ignored: the socket address is throttled');
  });

  const refreshError = (refreshToken: string) =>
    tokenError(
      oauth
        .refreshTokenGrantRequest(as, webClient, webAuth, refreshToken, insecure)
        .then((r) => oauth.processRefreshTokenResponse(as, webClient, r)),
    );

  await t.test('deactivation ends every credential, and reactivation revives none', async (t) => {
    const { tokens, browser } = await codeFlow(new FormBrowser(issuer));
    const key = await createApiKey(h.deps, ctx, {
      name: 'alice-ci',
      ownerEmail: 'alice@example.com',
      scopes: ['requests:read'],
    });
    const admin = await h.headers('admin');
    await h.app.inject({ method: 'DELETE', url: `/v1/users/${alice.id}`, headers: admin });
    t.equal((await refreshError(tokens.refresh_token!)).error, 'invalid_grant');
    await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${alice.id}`,
      headers: admin,
      payload: { status: 'active' },
    });
    t.equal((await refreshError(tokens.refresh_token!)).error, 'invalid_grant', 'the grant stays revoked');
    t.same(
      await resolveApiKey(h.deps, key.key),
      { valid: false, reason: 'revoked' },
      'the key stays revoked',
    );
    const again = await browser.get((await authorizeUrl()).url);
    t.match(again.html, /action="\/oauth\/login"/, 'the old session is gone: sign in again');
    const revokedKey = await h.waitForEvent(
      (e) => e.resourceId === key.id && e.type === 'system.config_changed' && !!e.changes?.revokedAt,
    );
    t.ok(revokedKey.changes?.revokedAt, 'the key revocation is in the audit trail');
  });

  await t.test('a password change signs the user out everywhere, keeps API keys', async (t) => {
    const { tokens, browser } = await codeFlow(new FormBrowser(issuer));
    const key = await createApiKey(h.deps, ctx, {
      name: 'alice-ci-2',
      ownerEmail: 'alice@example.com',
      scopes: ['requests:read'],
    });
    await setPassword(h.deps, ctx, 'alice@example.com', password);
    t.equal((await refreshError(tokens.refresh_token!)).error, 'invalid_grant', 'grants made before it end');
    const again = await browser.get((await authorizeUrl()).url);
    t.match(again.html, /action="\/oauth\/login"/, 'sessions made before it end');
    t.equal((await resolveApiKey(h.deps, key.key)).valid, true, 'an administrator issued the key: it stays');
    t.ok((await codeFlow(new FormBrowser(issuer))).tokens.access_token, 'the new password signs in');
  });

  await t.test('a refresh family remembers its latest rotated tokens only', async (t) => {
    const { tokens } = await codeFlow(new FormBrowser(issuer));
    let refresh = tokens.refresh_token!;
    const first = refresh;
    for (let i = 0; i < USED_REFRESH_KEPT + 2; i++) {
      const next = await oauth
        .refreshTokenGrantRequest(as, webClient, webAuth, refresh, insecure)
        .then((r) => oauth.processRefreshTokenResponse(as, webClient, r));
      refresh = next.refresh_token!;
    }
    const gid = refresh.split('.')[0];
    t.equal((await h.deps.grants.findById(gid))!.usedRefreshHashes.length, USED_REFRESH_KEPT, 'bounded');
    t.equal((await refreshError(first)).error, 'invalid_grant', 'a forgotten old token is still refused');
    const still = await oauth
      .refreshTokenGrantRequest(as, webClient, webAuth, refresh, insecure)
      .then((r) => oauth.processRefreshTokenResponse(as, webClient, r));
    t.ok(still.access_token, 'and did not revoke the family');
  });

  await t.test(
    'a password hashed by an earlier release signs in, and is rehashed with argon2id',
    async (t) => {
      const legacy = await createUser(h.deps, ctx, {
        email: 'legacy@example.com',
        name: 'Legacy',
        role: 'agent',
      });
      const salt = Buffer.alloc(16, 7);
      const key = scryptSync(password.normalize('NFKC'), salt, 32, { N: 16_384, r: 8, p: 1 });
      const scryptHash = ['scrypt', 16_384, 8, 1, salt.toString('base64url'), key.toString('base64url')].join(
        '$',
      );
      // FerretDB rewrites whole documents: let the relay finish with the user first.
      await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === legacy.id);
      await h.conn
        .collection('users')
        .updateOne({ _id: legacy.id as never }, { $set: { passwordHash: scryptHash } });
      const browser = new FormBrowser(issuer);
      // A wrong password against the legacy hash fails exactly as for an unknown account.
      const failure = async (email: string) => {
        const page = await browser.get((await authorizeUrl()).url);
        const res = await browser.post('/oauth/login', {
          ...formOf(page.html),
          email,
          password: 'not the password at all',
        });
        return { status: res.status, error: /<p class="error"[^>]*>([^<]*)</.exec(res.html)?.[1] };
      };
      const wrong = await failure('legacy@example.com');
      t.equal(wrong.status, 401, 'a wrong password is refused');
      t.ok(wrong.error, `with a message: ${wrong.error}`);
      t.same(wrong, await failure('nobody-legacy@example.com'), 'with the answer an unknown account gets');
      const page = await browser.get((await authorizeUrl()).url);
      const form = formOf(page.html);
      const res = await browser.post('/oauth/login', { ...form, email: 'legacy@example.com', password });
      t.equal(res.status, 303);
      const stored = (await h.deps.users.findByEmail('legacy@example.com', { withPassword: true }))!
        .passwordHash!;
      t.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, 'rehashed at the sign-in');
    },
  );

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
    t.match(
      csrfCookie,
      /^__Host-sd_csrf=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
      '__Host- prefixed',
    );
    const secret = /__Host-sd_csrf=([^;]+)/.exec(csrfCookie)![1];
    const login = await app.inject({
      method: 'POST',
      url: '/oauth/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `__Host-sd_csrf=${secret}` },
      payload: new URLSearchParams({
        csrf_token: hidden(page.body, 'csrf_token'),
        request: hidden(page.body, 'request'),
        email: 'alice@example.com',
        password,
      }).toString(),
    });
    t.equal(login.statusCode, 303);
    t.match(
      String(login.headers['set-cookie']),
      /__Host-sd_session=[^;]+; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Lax/,
    );
    const meta = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    t.equal(meta.json().issuer, httpsIssuer);
  });
});
