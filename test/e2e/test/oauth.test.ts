// OAuth 2.0 authorization code + PKCE + refresh with a real client library (oauth4webapi), the
// login and consent pages filled in headless Chromium, tokens used through the gateway; a
// deactivated user's token is refused at once.
import { Me } from '@support-desk/contracts';
import * as oauth from 'oauth4webapi';
import t from 'tap';
import { cast, createActor } from '../src/actors.js';
import {
  authorizeInBrowser,
  closePage,
  launchChromium,
  openPage,
  startCallbackServer,
} from '../src/browser.js';
import { expectError, expectOk, expectShape } from '../src/expect.js';
import { type Json, request } from '../src/http.js';
import { AT_ONCE_MS, eventually, startStack } from '../src/stack.js';

const stack = await startStack(t);
const { admin } = await cast(stack);
/** Per-call options: plain HTTP on loopback is fine for the test stack; every call is bounded. */
const opts = () => ({ [oauth.allowInsecureRequests]: true, signal: AbortSignal.timeout(20_000) });

const password = `pw-${stack.run}-Correct-Horse`;
const user = await createActor(stack, 'agent', 'oauth-agent', { password });
const callback = await startCallbackServer();
t.teardown(() => callback.close());
const confidential = await stack.deskctlJson([
  'oauth-clients',
  'create',
  '--name',
  'E2E web app',
  '--redirect-uri',
  callback.url,
]);
const publicClient = await stack.deskctlJson([
  'oauth-clients',
  'create',
  '--name',
  'E2E SPA',
  '--redirect-uri',
  callback.url,
  '--public',
]);
const browser = await launchChromium();
t.teardown(() => browser.close());
const context = await browser.newContext();

const issuer = new URL(stack.origin);
let as: oauth.AuthorizationServer;

/** Authorization URL with PKCE S256 and state. */
async function authorizationUrl(clientId: string, scope: string) {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', callback.url);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { url: url.toString(), codeVerifier, state };
}

const tokens: { access?: string; refresh?: string } = {};

t.test('discovery (RFC 8414) through the gateway', async (t) => {
  t.ok(
    confidential?.client_id && confidential?.client_secret,
    'deskctl oauth-clients create: client_id + client_secret',
  );
  t.ok(publicClient?.client_id && !publicClient?.client_secret, 'public client: no secret');
  const res = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts() });
  as = await oauth.processDiscoveryResponse(issuer, res);
  t.equal(as.issuer, stack.origin, 'issuer = the gateway origin');
  t.equal(
    new URL(as.authorization_endpoint!).pathname,
    '/oauth/authorize',
    'authorization_endpoint {auth_url}/oauth/authorize',
  );
  t.equal(new URL(as.token_endpoint!).pathname, '/oauth/token', 'token_endpoint {auth_url}/oauth/token');
  t.ok(as.code_challenge_methods_supported?.includes('S256'), 'S256 supported');
  t.notOk(as.code_challenge_methods_supported?.includes('plain'), 'plain not offered');
  const jwks = await request(`${stack.origin}/.well-known/jwks.json`);
  t.equal(jwks.status, 200, 'JWKS served');
  t.ok(
    jwks.json?.keys?.length > 0 && jwks.json.keys.every((k: Json) => k.kid && !k.d),
    'public keys with kid, no private parts',
  );
});

t.test('authorization code + PKCE: login and consent in Chromium, tokens from oauth4webapi', async (t) => {
  const client: oauth.Client = { client_id: confidential.client_id };
  const auth = await authorizationUrl(client.client_id, 'requests:read requests:write');
  const shown = await authorizeInBrowser(context, auth.url, { email: user.email, password });
  t.ok(shown.loggedIn, 'the login page asked for email and password');
  t.match(shown.consentText, /requests:read/, 'consent page lists requests:read');
  t.match(shown.consentText, /requests:write/, 'consent page lists requests:write');
  const cb = await callback.next();
  await closePage(shown.page);
  t.equal(cb.searchParams.get('state'), auth.state, 'state returned');
  t.ok(cb.searchParams.get('code'), 'code returned to the redirect_uri');
  const params = oauth.validateAuthResponse(as, client, cb, auth.state);
  const res = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.ClientSecretPost(confidential.client_secret),
    params,
    callback.url,
    auth.codeVerifier,
    opts(),
  );
  const raw = (await res.clone().json()) as Json;
  const result = await oauth.processAuthorizationCodeResponse(as, client, res);
  t.equal(result.token_type.toLowerCase(), 'bearer', 'token_type Bearer');
  t.ok(typeof result.expires_in === 'number' && result.expires_in > 0, `expires_in ${result.expires_in} s`);
  t.ok(typeof result.refresh_token === 'string', 'refresh_token');
  t.notOk('success' in raw, 'the token response is not wrapped in the envelope');
  t.same(String(result.scope).split(' ').sort(), ['requests:read', 'requests:write'], 'scope granted');
  tokens.access = result.access_token;
  tokens.refresh = result.refresh_token;
});

t.test('/me and the API with the access token', async (t) => {
  const api = stack.api(tokens.access ?? null);
  const me = expectOk(t, await api.get('/v1/me'), 200, 'GET /v1/me with an OAuth token');
  expectShape(t, Me, me, '/me');
  t.equal(me?.id, user.id, 'the token is the user');
  t.same(me?.scopes, ['requests:read', 'requests:write'], 'scopes = the granted scopes');
  t.same(me?.permissions, me?.scopes, 'permissions = scopes');
  t.equal(me?.credential?.type, 'oauth', 'credential type oauth');
  const created = expectOk(
    t,
    await api.post('/v1/requests', { title: 'From OAuth', description: 'via token', priority: 'low' }),
    201,
    'create with the token',
  );
  const detail = expectOk(t, await api.get(`/v1/requests/${created?.id}`), 200, 'read with the token');
  t.equal(detail?.requester?.id, user.id, 'requester is the token user');
  const res = await api.get('/v1/requests');
  t.ok(res.headers['x-ratelimit-limit'], 'token calls are rate limited (X-RateLimit-Limit)');
  expectError(t, await api.get('/v1/users'), 403, 'FORBIDDEN', 'users:read was not granted');
  // Tampering with the token is refused.
  const [h, p, s] = String(tokens.access).split('.');
  const flipped = `${h}.${p}.${s.slice(0, -4)}${s.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
  expectError(t, await stack.api(flipped).get('/v1/me'), 401, 'UNAUTHORIZED', 'tampered signature');
  const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${p}.`;
  expectError(t, await stack.api(none).get('/v1/me'), 401, 'UNAUTHORIZED', 'alg none');
  // The login was recorded.
  const login = await eventually(
    async () =>
      (await admin.api.get(`/v1/events?type=user.login&resourceId=${user.id}`)).json?.data?.events?.[0],
    { what: 'user.login event' },
  ).catch(() => undefined);
  t.ok(login, 'user.login recorded');
});

t.test('refresh: rotation, and reuse of a rotated token is refused', async (t) => {
  const client: oauth.Client = { client_id: confidential.client_id };
  const clientAuth = oauth.ClientSecretPost(confidential.client_secret);
  const res = await oauth.refreshTokenGrantRequest(as, client, clientAuth, String(tokens.refresh), opts());
  const next = await oauth.processRefreshTokenResponse(as, client, res);
  t.ok(next.access_token && next.access_token !== tokens.access, 'a new access token');
  t.ok(next.refresh_token && next.refresh_token !== tokens.refresh, 'the refresh token rotates');
  t.equal(next.token_type.toLowerCase(), 'bearer', 'token_type Bearer');
  t.ok(typeof next.expires_in === 'number', 'expires_in');
  expectOk(t, await stack.api(next.access_token).get('/v1/me'), 200, 'the refreshed token works');
  const reuse = await oauth.refreshTokenGrantRequest(as, client, clientAuth, String(tokens.refresh), opts());
  t.equal(reuse.status, 400, 'reusing the rotated refresh token is refused');
  t.equal(((await reuse.json()) as Json).error, 'invalid_grant', 'invalid_grant');
  const family = await oauth.refreshTokenGrantRequest(
    as,
    client,
    clientAuth,
    String(next.refresh_token),
    opts(),
  );
  t.equal(family.status, 400, 'reuse revokes the whole family: the newest refresh token is refused too');
  const wrongSecret = await oauth.refreshTokenGrantRequest(
    as,
    client,
    oauth.ClientSecretPost('wrong'),
    String(next.refresh_token),
    opts(),
  );
  t.equal(wrongSecret.status, 401, 'wrong client secret → 401 invalid_client');
  tokens.access = next.access_token;
});

t.test('Deny on the consent page → error=access_denied; a public client with PKCE', async (t) => {
  const denied = await authorizationUrl(confidential.client_id, 'requests:read');
  const shown = await authorizeInBrowser(context, denied.url, { email: user.email, password }, 'deny');
  t.notOk(shown.loggedIn, 'the session cookie skips the login page');
  const cb = await callback.next();
  await closePage(shown.page);
  t.equal(cb.searchParams.get('error'), 'access_denied', 'error=access_denied');
  t.equal(cb.searchParams.get('state'), denied.state, 'state returned');
  t.notOk(cb.searchParams.get('code'), 'no code');

  const client: oauth.Client = { client_id: publicClient.client_id, token_endpoint_auth_method: 'none' };
  const auth = await authorizationUrl(client.client_id, 'requests:read');
  const ok = await authorizeInBrowser(context, auth.url, { email: user.email, password });
  const cb2 = await callback.next();
  await closePage(ok.page);
  const params = oauth.validateAuthResponse(as, client, cb2, auth.state);
  // Redeems the code; called twice below, since a second redemption must be refused.
  const redeem = () =>
    oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      callback.url,
      auth.codeVerifier,
      opts(),
    );
  const res = await redeem();
  const result = await oauth.processAuthorizationCodeResponse(as, client, res);
  const me = expectOk(
    t,
    await stack.api(result.access_token).get('/v1/me'),
    200,
    'public client token works',
  );
  t.same(me?.scopes, ['requests:read'], 'only the requested scope');
  // The code is single-use, and a second redemption revokes what the first one issued.
  const reused = await redeem();
  t.equal(reused.status, 400, 'a second redemption of the code is refused');
  t.equal(((await reused.json()) as Json).error, 'invalid_grant', 'invalid_grant');
  const afterReuse = await oauth.refreshTokenGrantRequest(
    as,
    client,
    oauth.None(),
    String(result.refresh_token),
    opts(),
  );
  t.equal(afterReuse.status, 400, 'the refresh token issued from the reused code is revoked');
  // A wrong verifier is refused.
  const auth2 = await authorizationUrl(client.client_id, 'requests:read');
  const again = await authorizeInBrowser(context, auth2.url, { email: user.email, password });
  const cb3 = await callback.next();
  await closePage(again.page);
  const bad = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    oauth.validateAuthResponse(as, client, cb3, auth2.state),
    callback.url,
    oauth.generateRandomCodeVerifier(),
    opts(),
  );
  t.equal(bad.status, 400, 'wrong code_verifier refused');
});

t.test('an unregistered redirect_uri is never redirected to', async (t) => {
  const auth = await authorizationUrl(confidential.client_id, 'requests:read');
  const url = new URL(auth.url);
  url.searchParams.set('redirect_uri', 'http://127.0.0.1:9/evil');
  const res = await request(url.toString());
  t.not(res.status, 302, 'no redirect');
  t.notOk(String(res.headers.location ?? '').includes('evil'), 'never to the unregistered URI');
  const plain = new URL(auth.url);
  plain.searchParams.set('code_challenge_method', 'plain');
  const r2 = await request(plain.toString());
  t.ok(r2.status >= 300, `code_challenge_method=plain refused (${r2.status} ${r2.headers.location ?? ''})`);
});

/** A new grant through the browser (the session skips the login) and its tokens. */
async function freshTokens(
  scope: string,
  kind: 'confidential' | 'public' = 'confidential',
): Promise<oauth.TokenEndpointResponse> {
  const client: oauth.Client =
    kind === 'public'
      ? { client_id: publicClient.client_id, token_endpoint_auth_method: 'none' }
      : { client_id: confidential.client_id };
  const auth = await authorizationUrl(client.client_id, scope);
  const shown = await authorizeInBrowser(context, auth.url, { email: user.email, password });
  const cb = await callback.next();
  await closePage(shown.page);
  const res = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    kind === 'public' ? oauth.None() : oauth.ClientSecretPost(confidential.client_secret),
    oauth.validateAuthResponse(as, client, cb, auth.state),
    callback.url,
    auth.codeVerifier,
    opts(),
  );
  return oauth.processAuthorizationCodeResponse(as, client, res);
}

t.test('rate limits for tokens: per (OAuth client, user), Standard plan by default', async (t) => {
  t.equal(confidential.plan, 'standard', 'the client was registered with the Standard plan (default)');
  const first = await freshTokens('requests:read');
  const api = stack.api(first.access_token);
  // What the earlier subtests already used of this (client, user) general bucket, if anything.
  const probe = await api.get('/v1/requests?limit=1');
  expectOk(t, probe, 200, 'a call with the token');
  t.equal(probe.headers['x-ratelimit-limit'], '60', 'Standard: 60 general calls per minute');
  let remaining = Number(probe.headers['x-ratelimit-remaining']);
  t.ok(remaining >= 0 && remaining < 60, `X-RateLimit-Remaining ${remaining}`);
  let countdown = true;
  while (remaining > 0) {
    const res = await api.get('/v1/requests?limit=1');
    const now = Number(res.headers['x-ratelimit-remaining']);
    if (res.status !== 200 || now !== remaining - 1) countdown = false;
    remaining = now;
    if (res.status !== 200) break;
  }
  t.ok(countdown, 'the headers count down to 0');
  const refused = await api.get('/v1/requests?limit=1');
  expectError(t, refused, 429, 'RATE_LIMITED', 'over the limit with a token');
  t.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After');
  // A second token of the same user and client shares the bucket.
  const second = await freshTokens('requests:read');
  expectError(
    t,
    await stack.api(second.access_token).get('/v1/me'),
    429,
    'RATE_LIMITED',
    'another token of the same (client, user)',
  );
});

t.test("a deactivated user's access token is refused at once", async (t) => {
  // A fresh grant (the earlier ones were revoked by the reuse checks), from the public client:
  // the confidential client's bucket for this user was used up by the rate-limit subtest.
  const fresh = await freshTokens('requests:read', 'public');
  const api = stack.api(fresh.access_token);
  expectOk(t, await api.get('/v1/me'), 200, 'the token works before');
  expectOk(t, await admin.api.delete(`/v1/users/${user.id}`), 200, 'admin deactivates the user');
  const refused = await eventually(async () => (await api.get('/v1/me')).status === 401, {
    timeoutMs: AT_ONCE_MS,
    intervalMs: 50,
    what: 'the token to be refused',
  }).catch(() => false);
  t.ok(
    refused,
    `the access token is refused (401) within ${AT_ONCE_MS} ms (well under the 30 s credential cache: the notice path, not expiry)`,
  );
  expectError(t, await api.get('/v1/requests'), 401, 'UNAUTHORIZED', 'token of an inactive user');
  expectError(t, await user.api.get('/v1/me'), 401, 'UNAUTHORIZED', "and the user's API key");
  // and they cannot log in again
  const page = await openPage(context);
  await context.clearCookies();
  const again = await authorizationUrl(confidential.client_id, 'requests:read');
  await page.goto(again.url);
  await page.locator('input[name="email"]').fill(user.email);
  await page.locator('input[name="password"]').fill(password);
  await page
    .locator('form:has(input[name="password"]) [type="submit"], form:has(input[name="password"]) button')
    .first()
    .click();
  await page.waitForLoadState('load');
  t.equal(
    await page.getByRole('button', { name: /approve/i }).count(),
    0,
    'an inactive user gets no consent page',
  );
  await closePage(page);
});
