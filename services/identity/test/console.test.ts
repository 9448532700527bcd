import type { ResolveApiKeyReply } from '@support-desk/contracts';
import { callRpc } from '@support-desk/platform/messaging';
import { freePort } from '@support-desk/platform/testing';
import t from 'tap';
import { createApiKey, revokeApiKey } from '../src/use-cases/api-keys.js';
import { cliContext } from '../src/use-cases/deps.js';
import { createIdentityProvider } from '../src/use-cases/identity-providers.js';
import { createUser } from '../src/use-cases/users.js';
import { harness, callerOf } from './helpers.js';
import { FormBrowser, hidden, HOSTILE, shownEscaped } from './oauth-flow.js';

// The settings console through identity's HTTP interface, as the gateway forwards it (each call
// carries the forwarding assertion for the browser's address): sign-in, the admin-only rule,
// security headers, CSRF, and every change through deskctl's use cases with its events.

const ADDRESS = '198.51.100.7';

t.test('settings console', async (t) => {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const h = await harness(t, { OAUTH_ISSUER: issuer, CONSOLE_SESSION_TTL_SECONDS: '600' });
  await h.app.listen({ port, host: '127.0.0.1' });
  const ctx = cliContext();
  const password = 'a long admin password';
  await createUser(h.deps, ctx, { email: 'ada@example.com', name: 'Ada', role: 'admin', password });
  await createUser(h.deps, ctx, { email: 'abe@example.com', name: 'Abe', role: 'agent', password });
  const resolve = (key: string) =>
    callRpc<{ key: string }, ResolveApiKeyReply>(
      h.nc,
      h.names.rpc.resolveApiKey,
      { key },
      callerOf('resolveApiKey'),
    );

  /** A browser signed in as `email`; returns it with the page the sign-in answered. */
  async function signIn(email: string, address = ADDRESS) {
    const browser = new FormBrowser(issuer, address);
    const form = await browser.get('/settings/login');
    const res = await browser.post('/settings/login', {
      csrf_token: hidden(form.html, 'csrf_token'),
      email,
      password,
    });
    return { browser, res };
  }
  const csrfOf = (html: string) => hidden(html, 'csrf_token');

  await t.test('pages carry strict security headers; assets are served; no session → sign-in', async (t) => {
    const browser = new FormBrowser(issuer, ADDRESS);
    const login = await browser.get('/settings/login');
    t.equal(login.status, 200);
    t.match(login.html, /<title>Sign in · Support Desk<\/title>/);
    t.match(login.html, /action="\/settings\/login"/);
    const csp = login.headers.get('content-security-policy') ?? '';
    t.notMatch(csp, /unsafe-inline/, 'no inline script or style allowed');
    t.match(csp, /script-src 'self'/);
    t.match(csp, /form-action 'self'/);
    t.match(csp, /frame-ancestors 'none'/);
    t.equal(login.headers.get('x-frame-options'), 'DENY');
    t.equal(login.headers.get('cache-control'), 'no-store');
    t.notMatch(login.html, /<script>|<style>|style="/, 'no inline script or style in the page');
    const css = await browser.get('/assets/desk.css');
    t.equal(css.status, 200);
    t.match(css.headers.get('content-type'), /^text\/css/);
    const js = await browser.get('/assets/console.js');
    t.match(js.headers.get('content-type'), /^text\/javascript/);
    const keys = await browser.get('/settings/api-keys');
    t.equal(keys.status, 303);
    t.equal(keys.location, '/settings/login', "the console's first page needs no way back");
    const icon = await browser.get('/assets/favicon.svg');
    t.equal(icon.status, 200, 'a favicon');
    t.match(icon.headers.get('content-type'), /^image\/svg\+xml/);
    t.match(login.html, /<link rel="icon" href="\/assets\/favicon\.svg" type="image\/svg\+xml"\/?>/);
    t.equal((await browser.get('/settings')).status, 302, '/settings leads to the first section');
  });

  await t.test('a non-admin is refused with a clear page', async (t) => {
    const { browser, res } = await signIn('abe@example.com');
    t.equal(res.status, 403);
    t.match(res.html, /abe@example\.com is not an administrator/);
    const again = await browser.get('/settings/api-keys');
    t.equal(again.status, 403, 'the session does not open the console either');
    t.notMatch(again.html, /Create an API key/);
  });

  await t.test('API keys: create (scopes by role, re-authentication for admin), list, revoke', async (t) => {
    const { browser, res } = await signIn('ada@example.com');
    t.equal(res.status, 303);
    t.equal(res.location, '/settings/api-keys');
    const session = browser.cookies.get('sd_session');
    t.ok(session, 'the login session cookie is shared with the OAuth pages');
    let page = await browser.get('/settings/api-keys');
    t.equal(page.status, 200);
    t.match(page.html, /Signed in as <strong>ada@example\.com<\/strong>/);
    t.match(page.html, /aria-current="page">API keys/);

    const form = (extra: Record<string, string>) =>
      new URLSearchParams({
        csrf_token: csrfOf(page.html),
        name: 'CI bot',
        owner: 'abe@example.com',
        ...extra,
      });
    // URLSearchParams: two scopes are the field sent twice, as a browser sends checkboxes.
    const post = (body: URLSearchParams) => browser.post('/settings/api-keys', body);

    const beyondRole = form({ scopes: 'admin' });
    const refused = await post(beyondRole);
    t.equal(refused.status, 400);
    t.match(
      refused.html,
      /abe@example\.com is an agent: a key can have at most requests:read, requests:write, users:read/,
    );

    const noCsrf = new URLSearchParams({ name: 'x', owner: 'abe@example.com', scopes: 'requests:read' });
    const forged = await post(noCsrf);
    t.equal(forged.status, 403, 'a form without the CSRF token is refused');
    t.match(forged.html, /Nothing was changed/);

    const body = form({ expires_days: '30', plan: 'professional', allowlist: '203.0.113.0/24' });
    body.append('scopes', 'requests:read');
    body.append('scopes', 'requests:write');
    const created = await post(body);
    t.equal(created.status, 201);
    const key = /id="new-key" type="text" readonly value="([^"]+)"/.exec(created.html)?.[1];
    t.match(key, /^sd_key_/, 'the value is shown once');
    t.match(created.html, /data-copy="new-key"/, 'with a copy button');
    const resolved = await resolve(key!);
    t.ok(resolved.valid, 'the key works');
    if (!resolved.valid) return;
    t.same(resolved.scopes, ['requests:read', 'requests:write']);
    t.equal(resolved.plan, 'professional');
    t.same(resolved.allowlist, ['203.0.113.0/24']);
    const event = await h.waitForEvent((e) => e.resourceId === resolved.keyId);
    t.equal(event.type, 'system.config_changed');
    t.equal(event.actor.email, 'ada@example.com', 'who');
    t.equal(event.metadata.source, 'console');
    t.equal(event.ipAddress, ADDRESS, 'from where');
    t.equal(await h.stored.apiKeys.countDocuments({ name: 'x' }), 0, 'nothing written on refusal');

    page = await browser.get('/settings/api-keys');
    t.notMatch(page.html, /sd_key_[^"<]*_[A-Za-z0-9_-]{43}/, 'the list never shows a key value');
    t.match(page.html, new RegExp(`data-key-id="${resolved.keyId}"`));
    const confirm = await browser.get(`/settings/api-keys/revoke?id=${resolved.keyId}`);
    t.equal(confirm.status, 200);
    t.match(confirm.html, /Revoke the API key “CI bot” of abe@example\.com\?/);
    const revoked = await browser.post('/settings/api-keys/revoke', {
      csrf_token: csrfOf(confirm.html),
      id: resolved.keyId,
    });
    t.equal(revoked.status, 303);
    t.same(await resolve(key!), { valid: false, reason: 'revoked' });

    const adminScoped = form({ owner: 'ada@example.com', scopes: 'admin' });
    const noPassword = await post(adminScoped);
    t.equal(noPassword.status, 400);
    t.match(noPassword.html, /enter your password to create a key with the admin scope/);
    adminScoped.set('password', 'not the password');
    t.match((await post(adminScoped)).html, /That password is not right/);
    adminScoped.set('password', password);
    const full = await post(adminScoped);
    t.equal(full.status, 201, 'created after re-authentication');
  });

  await t.test('global IP allowlist: validation, lock-out warning, add and remove', async (t) => {
    const { browser } = await signIn('ada@example.com');
    let page = await browser.get('/settings/ip-allowlist');
    t.match(page.html, new RegExp(`id="my-address">${ADDRESS.replace(/\./g, '\\.')}<`));
    const send = (fields: Record<string, string>) =>
      browser.post('/settings/ip-allowlist', { csrf_token: csrfOf(page.html), ...fields });
    const bad = await send({ action: 'add', entry: '10.0.0.0/33' });
    t.equal(bad.status, 400);
    t.match(bad.html, /is not an IPv4\/IPv6 address or CIDR/);
    const lockout = await send({ action: 'add', entry: '10.0.0.0/8' });
    t.equal(lockout.status, 409, 'a list that would lock this address out is not saved at once');
    t.match(lockout.html, /would lock out your current address/);
    t.same((await h.deps.settings.get())?.globalAllowlist ?? [], [], 'nothing saved');
    const saved = await send({ action: 'add', entry: '10.0.0.0/8', confirm: 'lockout' });
    t.equal(saved.status, 303);
    page = await browser.get('/settings/ip-allowlist');
    t.match(page.html, /<code>10\.0\.0\.0\/8<\/code>/);
    const mine = await send({ action: 'add', entry: '198.51.100.0/24' });
    t.equal(mine.status, 303, 'a list that admits this address saves without a warning');
    const event = await h.waitForEvent(
      (e) =>
        e.resourceId === 'settings.ip_allowlist' && JSON.stringify(e.changes).includes('198.51.100.0/24'),
    );
    t.equal(event.metadata.source, 'console');
    t.equal(event.ipAddress, ADDRESS);
    t.equal((await send({ action: 'remove', entry: '10.0.0.0/8' })).status, 303);
    t.equal(
      (await send({ action: 'remove', entry: '198.51.100.0/24' })).status,
      303,
      'an empty list never locks out',
    );
    t.same((await h.deps.settings.get())?.globalAllowlist, []);
  });

  await t.test('OAuth clients: register (secret once), list, revoke', async (t) => {
    const { browser } = await signIn('ada@example.com');
    let page = await browser.get('/settings/oauth-clients');
    const bad = await browser.post('/settings/oauth-clients', {
      csrf_token: csrfOf(page.html),
      name: 'Bad',
      redirect_uris: 'http://example.com/cb',
      type: 'confidential',
    });
    t.equal(bad.status, 400);
    t.match(bad.html, /must be https/);
    const made = await browser.post('/settings/oauth-clients', {
      csrf_token: csrfOf(page.html),
      name: 'Reporting app',
      redirect_uris: 'https://reports.example.com/cb\nhttp://127.0.0.1:8123/cb',
      type: 'confidential',
    });
    t.equal(made.status, 201);
    const clientId = /id="new-client-id" type="text" readonly value="([^"]+)"/.exec(made.html)?.[1];
    t.match(made.html, /id="new-client-secret"/, 'the secret is shown once');
    page = await browser.get('/settings/oauth-clients');
    t.match(page.html, new RegExp(`data-client-id="${clientId}"`));
    t.notMatch(page.html, /new-client-secret/);
    const confirm = await browser.get(`/settings/oauth-clients/revoke?id=${clientId}`);
    const revoked = await browser.post('/settings/oauth-clients/revoke', {
      csrf_token: csrfOf(confirm.html),
      id: clientId!,
    });
    t.equal(revoked.status, 303);
    const reply = await callRpc<{ clientId: string }, { found: boolean }>(
      h.nc,
      h.names.rpc.getOAuthClient,
      {
        clientId: clientId!,
      },
      callerOf('getOAuthClient'),
    );
    t.equal(reply.found, false, 'a revoked client is unknown to the gateway');
    page = await browser.get('/settings/oauth-clients?status=all');
    t.match(page.html, /tag revoked/, 'listed as revoked among all the clients');
  });

  await t.test('webhooks: without the webhooks service the page says so; the rest works', async (t) => {
    // No webhooks service answers on this test's NATS namespace (the whole flow against a
    // real one is in test/e2e/test/console.test.ts).
    const { browser } = await signIn('ada@example.com');
    const keys = await browser.get('/settings/api-keys');
    t.match(keys.html, /<a href="\/settings\/webhooks">Webhooks<\/a>/, 'a nav entry');
    const page = await browser.get('/settings/webhooks');
    t.equal(page.status, 503);
    t.match(
      page.html,
      /The webhooks service is not answering; subscriptions can(&#39;|')t be shown or changed right now/,
    );
    t.match(page.html, /aria-current="page">Webhooks/);
    t.notMatch(page.html, /Create subscription/, 'no form that could not work');
    const create = await browser.post('/settings/webhooks', {
      csrf_token: csrfOf(page.html),
      url: 'https://hooks.example.com/a',
      events: 'request.*',
      active: 'on',
    });
    t.equal(create.status, 503, 'a change says the same, not a 500');
    t.match(create.html, /not answering/);
    const forged = await browser.post('/settings/webhooks/delete', { id: 'whk_01jzzzzzzzzzzzzzzzzzzzzzzz' });
    t.equal(forged.status, 403, 'a form without its CSRF token is refused first');
    t.equal((await browser.get('/settings/oauth-clients')).status, 200, 'the other pages keep working');
  });

  await t.test('SLA policies and the trash: without the requests service the pages say so', async (t) => {
    // No requests service answers on this test's NATS namespace (the whole flow against a real
    // one is in test/e2e/test/console.test.ts).
    const { browser } = await signIn('ada@example.com');
    const keys = await browser.get('/settings/api-keys');
    t.match(keys.html, /<a href="\/settings\/sla-policies">SLA policies<\/a>/, 'a nav entry');
    t.match(keys.html, /<a href="\/settings\/trash">Trash<\/a>/, 'and another');
    for (const [path, current] of [
      ['/settings/sla-policies', 'SLA policies'],
      ['/settings/trash', 'Trash'],
    ] as const) {
      const page = await browser.get(path);
      t.equal(page.status, 503, path);
      t.match(page.html, /The requests service is not answering; SLA policies, the trash and jobs can/);
      t.match(page.html, new RegExp(`aria-current="page">${current}`));
      t.notMatch(page.html, /Create policy|Restore/, 'no form that could not work');
    }
    const page = await browser.get('/settings/sla-policies');
    // Not JSON: refused before anything is asked (the service's absence said as well).
    const notJson = await browser.post('/settings/sla-policies', {
      csrf_token: csrfOf(page.html),
      policy: '<b>{"name":',
    });
    t.equal(notJson.status, 400);
    t.match(notJson.html, /The policy is not JSON: .* The requests service is not answering/);
    const array = await browser.post('/settings/sla-policies', {
      csrf_token: csrfOf(page.html),
      policy: '[]',
    });
    t.equal(array.status, 400);
    t.match(array.html, /must be a JSON object/);
    const create = await browser.post('/settings/sla-policies', {
      csrf_token: csrfOf(page.html),
      policy: '{"name": "x"}',
    });
    t.equal(create.status, 503, 'a change says the same, not a 500');
    const restore = await browser.post('/settings/trash/restore', {
      csrf_token: csrfOf(page.html),
      id: 'req_01jzzzzzzzzzzzzzzzzzzzzzzz',
    });
    t.equal(restore.status, 503);
    t.match(restore.html, /not answering/);
    for (const path of ['/settings/sla-policies/delete', '/settings/trash/restore']) {
      const forged = await browser.post(path, { id: 'slp_01jzzzzzzzzzzzzzzzzzzzzzzz' });
      t.equal(forged.status, 403, `${path}: a form without its CSRF token is refused first`);
    }
  });

  await t.test('a signed-out deep link returns to its page after sign-in, never elsewhere', async (t) => {
    const browser = new FormBrowser(issuer, ADDRESS);
    const deep = await browser.get('/settings/oauth-clients?status=all&page=1');
    t.equal(deep.status, 303);
    const login = await browser.get(deep.location!);
    t.match(login.html, /name="return_to" value="\/settings\/oauth-clients\?status=all&amp;page=1"/);
    const back = await browser.post('/settings/login', {
      csrf_token: hidden(login.html, 'csrf_token'),
      email: 'ada@example.com',
      password,
      return_to: hidden(login.html, 'return_to'),
    });
    t.equal(back.status, 303);
    t.equal(back.location, '/settings/oauth-clients?status=all&page=1', 'back where the link pointed');
    for (const elsewhere of [
      'https://evil.example/settings',
      '//evil.example/settings',
      '/\\evil.example/settings',
      '/settings/../oauth/authorize?client_id=x',
      '/settingsevil',
      '/settings/logout',
      'javascript:alert(1)',
    ]) {
      const other = new FormBrowser(issuer, ADDRESS);
      const form = await other.get(`/settings/login?return_to=${encodeURIComponent(elsewhere)}`);
      t.notMatch(form.html, /evil|javascript|oauth|logout/, `${elsewhere}: not carried in the form`);
      const res = await other.post('/settings/login', {
        csrf_token: hidden(form.html, 'csrf_token'),
        email: 'ada@example.com',
        password,
        return_to: elsewhere,
      });
      t.equal(res.location, '/settings/api-keys', `${elsewhere}: the console's first page instead`);
    }
  });

  await t.test('every list is paged and filtered; Create comes first', async (t) => {
    const { browser } = await signIn('ada@example.com');
    const abe = (await h.deps.users.findByEmail('abe@example.com'))!;
    const made: string[] = [];
    for (let i = 0; i < 23; i++) {
      const key = await createApiKey(h.deps, ctx, {
        ownerEmail: 'abe@example.com',
        name: `bulk ${i}`,
        scopes: ['requests:read'],
      });
      made.push(key.id);
    }
    await revokeApiKey(h.deps, ctx, made[22]);
    const rows = (html: string, attr: string) =>
      (html.match(new RegExp(`data-${attr}-id="`, 'g')) ?? []).length;
    let page = await browser.get('/settings/api-keys');
    t.equal(rows(page.html, 'key'), 20, 'one page of 20');
    t.ok(
      page.html.indexOf('Create an API key') < page.html.indexOf('<table'),
      'Create comes before the list',
    );
    t.notMatch(page.html, new RegExp(`data-key-id="${made[22]}"`), 'revoked keys are hidden by default');
    t.match(page.html, /1–20 of \d+/);
    const next = /<a href="([^"]+)"[^>]*rel="next"/.exec(page.html)?.[1]?.replace(/&amp;/g, '&');
    t.match(next, /^\/settings\/api-keys\?.*page=2/, 'a link to the next page');
    page = await browser.get(next!);
    t.ok(rows(page.html, 'key') >= 1, 'the next page');
    t.match(page.html, /rel="prev"/);
    page = await browser.get('/settings/api-keys?status=inactive');
    t.equal(
      rows(page.html, 'key'),
      (page.html.match(/tag revoked/g) ?? []).length,
      'revoked or expired only',
    );
    t.match(page.html, new RegExp(`data-key-id="${made[22]}"`));
    page = await browser.get(
      `/settings/api-keys?owner=${encodeURIComponent('abe@example.com')}&status=all&limit=100`,
    );
    t.equal(
      rows(page.html, 'key'),
      await h.stored.apiKeys.countDocuments({ ownerId: abe._id }),
      "one owner's keys",
    );
    t.notMatch(page.html, /<td class="wrap">ada@example\.com/, 'and no one else’s');
    t.match(page.html, /value="abe@example\.com"/, 'the filter is shown as applied');
    page = await browser.get('/settings/api-keys?owner=nobody%40example.com');
    t.match(page.html, /No user has the email nobody@example\.com/);
    t.equal(rows(page.html, 'key'), 0);

    page = await browser.get('/settings/ip-allowlist');
    t.ok(page.html.indexOf('id="add-entry"') < page.html.indexOf('id="entries"'), 'Add comes first');
    page = await browser.get('/settings/oauth-clients');
    t.ok(page.html.indexOf('Register a client') < page.html.indexOf('id="list"'), 'Register comes first');
    t.notMatch(page.html, /tag revoked/, 'revoked clients are hidden by default');
    page = await browser.get('/settings/oauth-clients?status=inactive');
    t.match(page.html, /tag revoked/, 'and shown on request');
  });

  await t.test('users: list by identity provider, link one to a provider (not yourself)', async (t) => {
    const { browser } = await signIn('ada@example.com');
    await createIdentityProvider(h.deps, ctx, { name: 'okta', kind: 'scim' });
    let page = await browser.get('/settings/users');
    t.equal(page.status, 200);
    t.match(page.html, /aria-current="page">Users/);
    t.match(page.html, /abe@example\.com/);
    page = await browser.get('/settings/users?search=abe&idp=local');
    const abe = (await h.deps.users.findByEmail('abe@example.com'))!;
    const linkAction = new RegExp(`href="/settings/users/link\\?id=${abe._id}"`);
    t.match(page.html, linkAction, 'a local user can be linked');
    /** The link form of a user, then its answer to linking them to okta under `externalId`. */
    const link = async (id: string, externalId: string) => {
      const form = await browser.get(`/settings/users/link?id=${id}`);
      t.equal(form.status, 200);
      t.match(form.html, /<option value="okta">okta/);
      return browser.post('/settings/users/link', {
        csrf_token: csrfOf(form.html),
        id,
        idp: 'okta',
        external_id: externalId,
      });
    };
    const linked = await link(abe._id, '00u-abe');
    t.equal(linked.status, 303);
    t.match(linked.location, /^\/settings\/users\?/);
    const event = await h.waitForEvent(
      (e) => e.type === 'user.updated' && e.resourceId === abe._id && !!e.changes?.identityProvider,
    );
    t.same(event.changes?.identityProvider, { from: 'local', to: 'okta' });
    t.equal(event.metadata.source, 'console');
    t.equal(event.ipAddress, ADDRESS);
    page = await browser.get(linked.location!);
    t.match(page.html, /abe@example\.com is linked to okta/);
    page = await browser.get('/settings/users?idp=okta');
    t.match(page.html, /00u-abe/, 'shown with its external id');
    t.notMatch(page.html, linkAction, 'a linked user has no Link action');

    const ada = (await h.deps.users.findByEmail('ada@example.com'))!;
    const refused = await link(ada._id, '00u-ada');
    t.equal(refused.status, 409);
    t.match(refused.html, /cannot link your own account/);
    t.equal((await h.deps.users.findById(ada._id))?.identityProvider, 'local');
  });

  await t.test('what users typed is shown as text: a user name, an address refused', async (t) => {
    const { browser } = await signIn('ada@example.com');
    const user = await createUser(h.deps, ctx, {
      email: 'hostile@example.com',
      name: HOSTILE,
      role: 'agent',
      password,
    });
    const users = await browser.get('/settings/users?search=hostile');
    t.match(users.html, `data-user-id="${user.id}"`);
    shownEscaped(t, users.html, 'the users list');
    const link = await browser.get(`/settings/users/link?id=${user.id}`);
    shownEscaped(t, link.html, 'the link page');

    const page = await browser.get('/settings/ip-allowlist');
    const refused = await browser.post('/settings/ip-allowlist', {
      csrf_token: csrfOf(page.html),
      action: 'add',
      entry: HOSTILE,
    });
    t.equal(refused.status, 400);
    shownEscaped(t, refused.html, 'the refusal and the field sent again', 2);

    // A refused create form comes back as sent: a text field, and a text area it cannot end.
    const keys = await browser.get('/settings/api-keys');
    const again = await browser.post('/settings/api-keys', {
      csrf_token: csrfOf(keys.html),
      name: HOSTILE,
      owner: 'nobody@example.com',
      scopes: 'requests:read',
      allowlist: `</textarea>${HOSTILE}`,
    });
    t.ok(again.status >= 400, `refused (${again.status})`);
    t.match(again.html, /&lt;\/textarea(>|&gt;)/, 'the text area holds what was sent, as text');
    shownEscaped(t, again.html, 'the key form sent again', 2);
  });

  await t.test(
    'a form token belongs to its session: never another one, nor one from before sign-in',
    async (t) => {
      const { browser: victim } = await signIn('ada@example.com');
      const signedIn = async () => (await victim.get('/settings/api-keys')).status === 200;
      t.ok(await signedIn());
      // Another visitor's own secret and token (a valid pair, made signed out), planted in the
      // administrator's browser: a sibling site can set a cookie where it is not `__Host-`.
      const attacker = new FormBrowser(issuer, ADDRESS);
      const theirs = csrfOf((await attacker.get('/settings/login')).html);
      victim.cookies.set('sd_csrf', attacker.cookies.get('sd_csrf')!);
      const planted = await victim.post('/settings/logout', { csrf_token: theirs });
      t.equal(planted.status, 403, "another visitor's secret and token, in an administrator's session");
      t.ok(await signedIn(), 'nothing was changed');

      // The sign-in form's token does not outlive the sign-in.
      const fresh = new FormBrowser(issuer, ADDRESS);
      const early = csrfOf((await fresh.get('/settings/login')).html);
      const login = await fresh.post('/settings/login', {
        csrf_token: early,
        email: 'ada@example.com',
        password,
      });
      t.equal(login.status, 303);
      t.equal((await fresh.post('/settings/logout', { csrf_token: early })).status, 403, 'a token of before');

      // Nor does a session's token serve another session, with the same secret cookie.
      const mine = csrfOf((await fresh.get('/settings/api-keys')).html);
      const { browser: other } = await signIn('ada@example.com');
      other.cookies.set('sd_csrf', fresh.cookies.get('sd_csrf')!);
      t.equal((await other.post('/settings/logout', { csrf_token: mine })).status, 403, "another session's");
      const out = await fresh.post('/settings/logout', { csrf_token: mine });
      t.equal(out.status, 303, 'its own session takes it');
    },
  );

  await t.test('the console session times out', async (t) => {
    const { browser } = await signIn('ada@example.com');
    t.equal((await browser.get('/settings/api-keys')).status, 200);
    h.advance(601_000);
    const late = await browser.get('/settings/api-keys');
    t.equal(late.status, 303);
    t.equal(late.location, '/settings/login?timeout=1');
    t.match((await browser.get(late.location!)).html, /timed out/);
  });
});

t.test('under https the console cookies are __Host-, Secure, SameSite', async (t) => {
  const h = await harness(t, { OAUTH_ISSUER: 'https://desk.example.com' });
  const page = await h.app.inject({ method: 'GET', url: '/settings/login' });
  t.equal(page.statusCode, 200);
  const cookie = String(page.headers['set-cookie']);
  t.match(cookie, /^__Host-sd_csrf=[A-Za-z0-9_-]{24}; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  const secret = /__Host-sd_csrf=([^;]+)/.exec(cookie)![1];
  t.notMatch(page.body, secret, 'the cookie holds the secret; the form a token made from it');
  const noToken = await h.app.inject({
    method: 'POST',
    url: '/settings/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `__Host-sd_csrf=${secret}` },
    payload: 'email=a%40example.com&password=whatever-long-enough',
  });
  t.equal(noToken.statusCode, 403, 'a sign-in form without its token is refused');
  t.equal(noToken.headers['x-frame-options'], 'DENY');
  const plainCookie = await h.app.inject({
    method: 'GET',
    url: '/settings/api-keys',
    headers: { cookie: 'sd_session=not-the-secure-name' },
  });
  t.equal(plainCookie.statusCode, 303, 'under https only the __Host- cookie is a session');
});
