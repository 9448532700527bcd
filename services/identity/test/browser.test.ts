import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHROMIUM_PATH, chromiumLaunchOptions, freePort } from '@support-desk/platform/testing';
import * as oauth from 'oauth4webapi';
import { chromium } from 'playwright-core';
import t from 'tap';
import { cliContext } from '../src/use-cases/deps.js';
import { createOAuthClient } from '../src/use-cases/oauth-clients.js';
import { createUser } from '../src/use-cases/users.js';
import { harness } from './helpers.js';

const insecure = { [oauth.allowInsecureRequests]: true };

t.test(
  'login and consent pages in headless Chromium',
  { skip: !existsSync(CHROMIUM_PATH) && `no ${CHROMIUM_PATH}` },
  async (t) => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const h = await harness(t, { OAUTH_ISSUER: issuer });
    await h.app.listen({ port, host: '127.0.0.1' });
    const ctx = cliContext();
    const password = 'a long browser password';
    const user = await createUser(h.deps, ctx, {
      email: 'dana@example.com',
      name: 'Dana',
      role: 'admin',
      password,
    });
    // The client's redirect target: a real loopback server that records the callback.
    let callback: string | undefined;
    const callbackServer = createServer((req, res) => {
      if (req.url?.startsWith('/browser-callback')) callback = `http://127.0.0.1${req.url}`;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('callback received');
    });
    await new Promise<void>((r) => callbackServer.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise((r) => callbackServer.close(r)));
    const redirectUri = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/browser-callback`;
    const client = await createOAuthClient(h.deps, ctx, {
      name: 'Browser <Test> App',
      redirectUris: [redirectUri],
    });
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oauth2', ...insecure }),
    );
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'requests:read users:read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();

    const browser = await chromium.launch(chromiumLaunchOptions());
    t.teardown(() => browser.close());
    const page = await browser.newPage();

    await page.goto(url.toString());
    t.equal(await page.title(), 'Sign in · Support Desk');
    await page.fill('input[name="email"]', 'dana@example.com');
    await page.fill('input[name="password"]', 'wrong password here');
    await page.click('button[type="submit"]');
    t.match(await page.textContent('[role="alert"]'), /Invalid email or password/);
    await page.fill('input[name="password"]', password);
    await page.click('button[type="submit"]');
    await page.waitForSelector('button[value="approve"]');
    t.equal(await page.title(), 'Authorize access · Support Desk');
    t.match(await page.textContent('body'), /Browser <Test> App/, 'client name escaped and shown');
    t.same(await page.$$eval('#scopes code', (els) => els.map((e) => e.textContent)), [
      'requests:read',
      'users:read',
    ]);
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'sd_session');
    t.ok(session?.httpOnly, 'session cookie is HttpOnly');
    t.equal(session?.sameSite, 'Lax');
    t.equal(session?.secure, false, 'not Secure on an http issuer');
    await Promise.all([page.waitForURL(`${redirectUri}**`), page.click('button[value="approve"]')]);
    t.match(await page.textContent('body'), /callback received/);
    t.ok(callback, 'redirected to the client');
    callback = callback!.replace('http://127.0.0.1', new URL(redirectUri).origin);

    const params = oauth.validateAuthResponse(as, { client_id: client.client_id }, new URL(callback!), state);
    const tokens = await oauth
      .authorizationCodeGrantRequest(
        as,
        { client_id: client.client_id },
        oauth.ClientSecretBasic(client.client_secret!),
        params,
        redirectUri,
        verifier,
        insecure,
      )
      .then((r) => oauth.processAuthorizationCodeResponse(as, { client_id: client.client_id }, r));
    t.equal(tokens.scope, 'requests:read users:read');
    await h.waitForEvent((e) => e.type === 'user.login' && e.resourceId === user.id);
  },
);
