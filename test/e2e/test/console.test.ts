// The settings console in headless Chromium through the gateway (issue 19): an administrator signs
// in, creates an API key, uses it against the API, revokes it and sees it refused, edits the global
// IP allowlist (with the lock-out warning), subscribes a webhook receiver (secret once, a signed
// ping, the delivery listed) and deletes it; a non-admin is refused; a form without its CSRF token
// is refused. Issue 29: lists are paged and filtered with Create at the top, a signed-out deep
// link comes back to its page after sign-in, the tab has an icon, and a user is linked to an
// identity provider; the API reference at /docs is driven the same way (Authorize, Try it out,
// Execute). A screenshot of each page is saved under test/e2e/.tap-output/console/.
import {
  ID_PREFIX,
  idKindOfPattern,
  PUBLIC_ROUTE_SCHEMAS,
  PUBLIC_ROUTES,
  ROUTE_EXAMPLES,
  routeKey,
} from '@support-desk/contracts';
import fs from 'node:fs';
import path from 'node:path';
import { startReceiver } from '@support-desk/platform/testing';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import { createActor } from '../src/actors.js';
import { closePage, launchChromium, openPage } from '../src/browser.js';
import { expectOk } from '../src/expect.js';
import { request } from '../src/http.js';
import { authorize, openOperation, tryItOut } from '../src/swagger-ui.js';
import { AT_ONCE_MS, eventually, ROOT, startStack } from '../src/stack.js';

const SHOTS = path.join(ROOT, 'test/e2e/.tap-output/console');
fs.mkdirSync(SHOTS, { recursive: true });

const stack = await startStack(t);
const password = `pw-${stack.run}-Console-Horse`;
const admin = await createActor(stack, 'admin', 'console-admin', { password });
const agent = await createActor(stack, 'agent', 'console-agent', { password });
const browser = await launchChromium();
t.teardown(() => browser.close());

/** What a user may type that would run as script, or end an attribute, if a page did not escape it. */
const HOSTILE = `<script>alert(1)</script>"'&`;

/** That the console page at `path` holds HOSTILE only as text: escaped in its HTML, no script made of it. */
async function shownAsText(t: Test, page: Page, path: string) {
  const html = await (await page.request.get(`${stack.origin}${path}`)).text();
  t.ok(html.includes('alert(1)'), `${path}: the value is on the page`);
  t.notOk(html.includes(HOSTILE), `${path}: never as markup`);
  t.equal(await page.locator('script:not([src])').count(), 0, `${path}: no inline script in the document`);
}

async function shot(page: Page, name: string) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/**
 * Opens the console in a fresh browser context and signs in; returns the page after sign-in
 * (with a screenshot of the sign-in page under `shotName`, when given).
 */
async function signIn(email: string, shotName?: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
  t.teardown(() => context.close());
  const page = await openPage(context);
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.origin}/settings`);
  await page.waitForURL(/\/settings\/login$/);
  if (shotName) await shot(page, shotName);
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
  return page;
}

t.test('an administrator manages API keys in the browser', async (t) => {
  const page = await signIn(admin.email, 'sign-in');
  t.equal(await page.title(), 'API keys · Support Desk');
  const response = await page.goto(`${stack.origin}/settings/api-keys`);
  const headers = response!.headers();
  t.equal(headers['x-frame-options'], 'DENY');
  t.match(headers['content-security-policy'], /script-src 'self'/);
  t.notMatch(headers['content-security-policy'], /unsafe-inline/);
  await shot(page, 'api-keys');
  await page.setViewportSize({ width: 390, height: 844 });
  t.equal(
    await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1'),
    true,
    'on a phone-sized screen the page does not scroll sideways (the table scrolls in its box)',
  );
  await shot(page, 'api-keys-phone');
  await page.setViewportSize({ width: 1200, height: 800 });

  const create = page.locator('details.create > summary', { hasText: 'Create an API key' });
  const list = page.locator('#list');
  t.ok(
    (await create.boundingBox())!.y < ((await list.boundingBox())?.y ?? Infinity),
    'Create comes before the list',
  );
  await create.click();
  await page.getByLabel('Name', { exact: true }).fill('Console e2e key');
  await page.getByLabel('Owner (email)', { exact: true }).fill(agent.email);
  // Each scope's label is its name and what it allows: "requests:read — Read …".
  await page.getByLabel(/\brequests:read — /).check();
  await page.getByLabel(/\brequests:write — /).check();
  await page.getByLabel('Plan', { exact: true }).selectOption('enterprise');
  await page.getByLabel('General', { exact: true }).fill('100000');
  await page.getByLabel('Events', { exact: true }).fill('100000');
  await page.getByLabel('Expires in (days)', { exact: true }).fill('30');
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Create API key' }).click(),
  ]);
  const key = await page.locator('#new-key').inputValue();
  t.match(key, /^sd_key_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/, 'the key is shown once');
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  t.equal(await page.evaluate('navigator.clipboard.readText()'), key, 'copied to the clipboard');
  await shot(page, 'api-key-created');
  const keyId = /^sd_(key_[0-9a-z]{26})_/.exec(key)![1];

  const used = await stack.api(key).get('/v1/requests?limit=1');
  expectOk(t, used, 200, 'the new key calls the API');
  const row = page.locator(`tr[data-key-id="${keyId}"]`);
  t.match(await row.textContent(), new RegExp(agent.email.replace(/[.+]/g, '\\$&')));

  await Promise.all([page.waitForLoadState('load'), row.getByRole('link', { name: /Revoke/ }).click()]);
  t.match(await page.locator('[role=alert]').textContent(), /Revoke the API key “Console e2e key”/);
  await shot(page, 'api-key-revoke-confirm');
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Revoke key' }).click(),
  ]);
  t.match(await page.locator('[role=status]').textContent(), /is revoked/);
  t.equal(await row.count(), 0, 'revoked keys are hidden from the list by default');
  await page.getByLabel('Status', { exact: true }).selectOption('inactive');
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Filter' }).click()]);
  t.match(page.url(), /\/settings\/api-keys\?(.*&)?status=inactive(&|$)/, 'the filter is in the address');
  t.match(await row.textContent(), /revoked/, 'and shown when asked for');
  const refused = await eventually(
    async () => {
      const res = await stack.api(key).get('/v1/requests?limit=1');
      if (res.status !== 401) throw new Error(`still ${res.status}`);
      return res;
    },
    { timeoutMs: AT_ONCE_MS },
  );
  t.equal(refused.status, 401, 'the revoked key is refused');

  // Audit consumes the events from the stream: wait for both (created, revoked).
  type Listed = { id: string; actor: { email: string }; ipAddress?: string };
  const events = await eventually(async () => {
    const res = await admin.api.get(`/v1/events?resourceId=${keyId}`);
    const listed = (res.json?.data?.events ?? []) as Listed[];
    return listed.length >= 2 ? listed : null;
  });
  t.equal(events.length, 2, 'audit shows the key created and revoked');
  for (const e of events) {
    t.equal(e.actor.email, admin.email, 'who');
    t.equal(e.ipAddress, '127.0.0.1', 'from where');
  }
  const detail = expectOk(t, await admin.api.get(`/v1/events/${events[0].id}`), 200, 'one event');
  t.equal(detail.metadata.source, 'console');
});

t.test('an administrator edits the global IP allowlist, warned before locking out', async (t) => {
  // Whatever happens below, the stack admits loopback again after (other files may share it).
  t.teardown(() => stack.deskctl(['settings', 'ip-allowlist', 'clear', '--yes']));
  const page = await signIn(admin.email);
  await page.goto(`${stack.origin}/settings/ip-allowlist`);
  t.equal(await page.locator('#my-address').textContent(), '127.0.0.1');
  const add = async (entry: string) => {
    await page.getByLabel('Address or CIDR', { exact: true }).fill(entry);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Add' }).click()]);
  };
  await add('10.0.0.300');
  t.match(await page.locator('[role=alert]').textContent(), /is not an IPv4\/IPv6 address or CIDR/);
  await add('10.0.0.0/8');
  t.match(
    await page.locator('.warning').textContent(),
    /would lock out your current address \(127\.0\.0\.1\)/,
  );
  await shot(page, 'allowlist-warning');
  await Promise.all([page.waitForLoadState('load'), page.getByRole('link', { name: 'Cancel' }).click()]);
  t.equal(await page.locator('#allowlist-empty').count(), 1, 'cancelled: nothing saved');

  await add('127.0.0.0/8');
  await add('10.0.0.0/8');
  t.match(await page.locator('[role=status]').textContent(), /saved/);
  t.same(await page.locator('tbody code').allTextContents(), ['127.0.0.0/8', '10.0.0.0/8']);
  await shot(page, 'allowlist');
  expectOk(t, await agent.api.get('/v1/requests?limit=1'), 200, 'loopback still admitted');

  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Remove 127.0.0.0/8' }).click(),
  ]);
  t.match(await page.locator('.warning').textContent(), /would lock out/);
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Save anyway' }).click(),
  ]);
  const locked = await eventually(
    async () => {
      const res = await agent.api.get('/v1/requests?limit=1');
      if (res.status !== 403) throw new Error(`still ${res.status}`);
      return res;
    },
    { timeoutMs: AT_ONCE_MS },
  );
  t.equal(
    locked.json?.error?.code,
    'FORBIDDEN',
    'API keys are refused from an address the list does not admit',
  );
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Remove 10.0.0.0/8' }).click(),
  ]);
  t.equal(await page.locator('#allowlist-empty').count(), 1, 'the list is empty again');
  await eventually(
    async () => {
      const res = await agent.api.get('/v1/requests?limit=1');
      if (res.status !== 200) throw new Error(`still ${res.status}`);
      return true;
    },
    { timeoutMs: AT_ONCE_MS },
  );
});

t.test('OAuth clients: register with the secret shown once, then revoke', async (t) => {
  const page = await signIn(admin.email);
  await page.goto(`${stack.origin}/settings/oauth-clients`);
  await page.locator('details.create > summary', { hasText: 'Register a client' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Console e2e app');
  await page.getByLabel('Redirect URIs', { exact: true }).fill('https://app.example.com/callback');
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Register client' }).click(),
  ]);
  const clientId = await page.locator('#new-client-id').inputValue();
  t.match(clientId, /^cli_[0-9a-z]{26}$/, 'client_id shown');
  t.match(await page.locator('#new-client-secret').inputValue(), /^[A-Za-z0-9_-]{43}$/, 'secret shown once');
  await shot(page, 'oauth-clients');
  await Promise.all([
    page.waitForLoadState('load'),
    page
      .locator(`tr[data-client-id="${clientId}"]`)
      .getByRole('link', { name: /Revoke/ })
      .click(),
  ]);
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Revoke client' }).click(),
  ]);
  t.equal(await page.locator(`tr[data-client-id="${clientId}"]`).count(), 0, 'hidden once revoked');
  await page.goto(`${stack.origin}/settings/oauth-clients?status=all`);
  t.match(await page.locator(`tr[data-client-id="${clientId}"]`).textContent(), /revoked/);
  await closePage(page);
});

t.test('webhooks: subscribe, secret once, ping, the delivery listed, rotate, delete', async (t) => {
  const { url, received } = await startReceiver(t);
  const page = await signIn(admin.email);
  await page.goto(`${stack.origin}/settings/webhooks`);
  await page.locator('details.create > summary', { hasText: 'Create a subscription' }).click();
  await page.getByLabel('URL', { exact: true }).fill(url);
  await page.getByLabel('Events', { exact: true }).fill('request.*, user.created');
  await page.getByLabel('Description', { exact: true }).fill(`Console e2e receiver ${HOSTILE}`);
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Create subscription' }).click(),
  ]);
  const secret = await page.locator('#new-secret').inputValue();
  t.match(secret, /^whsec_[A-Za-z0-9+/=]+$/, 'the signing secret is shown once');
  await shot(page, 'webhook-created');
  const row = page.locator('tr[data-webhook-id]', { hasText: url });
  const id = (await row.getAttribute('data-webhook-id'))!;
  t.match(await row.textContent(), /request\.\*.*user\.created.*active.*Console e2e receiver/s);
  t.equal(
    await row.locator('td.wrap').textContent(),
    `Console e2e receiver ${HOSTILE}`,
    'the description as typed, shown as text',
  );
  await shownAsText(t, page, '/settings/webhooks');
  await page.goto(`${stack.origin}/settings/webhooks`);
  t.equal(await page.locator('#new-secret').count(), 0, 'and not again');

  await Promise.all([page.waitForLoadState('load'), row.getByRole('link', { name: /Manage/ }).click()]);
  await page.getByLabel('URL', { exact: true }).fill('http://10.0.0.1/hook');
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Save changes' }).click(),
  ]);
  t.match(
    await page.locator('[role=alert]').textContent(),
    /body\.url.*not an allowed destination/,
    "the use case's refusal, next to the form",
  );
  t.equal(
    await page.getByLabel('Description', { exact: true }).inputValue(),
    `Console e2e receiver ${HOSTILE}`,
    'the refused form comes back as sent',
  );
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Send ping' }).click()]);
  t.match(await page.locator('[role=status]').first().textContent(), /Ping dlv_\w+ is queued/);
  await eventually(() => received.length >= 1, { what: 'the ping at the receiver' });
  const ping = new Webhook(secret).verify(received[0].body, received[0].headers);
  t.match(ping, { type: 'webhook.ping', webhookId: id }, 'a signed ping');
  const delivery = page.locator('tr[data-delivery-id]', { hasText: 'webhook.ping' });
  await eventually(
    async () => {
      await page.reload();
      return /succeeded/.test((await delivery.textContent()) ?? '');
    },
    { what: 'the delivery listed as succeeded' },
  );
  t.match(await delivery.textContent(), /HTTP 204/);
  t.equal(
    await page.locator('table:has(tr[data-delivery-id]) caption').textContent(),
    'Deliveries 1–1 of 1, newest first',
  );
  await shot(page, 'webhook');
  await page.setViewportSize({ width: 390, height: 844 });
  t.equal(
    await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1'),
    true,
    'phone-sized: no sideways scrolling (the deliveries table scrolls in its box)',
  );
  await page.setViewportSize({ width: 1200, height: 800 });

  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Rotate secret' }).click(),
  ]);
  const rotated = await page.locator('#new-secret').inputValue();
  t.match(rotated, /^whsec_/, 'a new secret, shown once');
  t.not(rotated, secret);
  t.match(
    await page.locator('section.success').textContent(),
    /previous secret keeps signing beside it until/,
  );

  await Promise.all([page.waitForLoadState('load'), page.getByRole('link', { name: 'Delete…' }).click()]);
  t.match(await page.locator('[role=alert]').textContent(), /Delete the webhook subscription for/);
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Delete subscription' }).click(),
  ]);
  t.match(await page.locator('[role=status]').textContent(), /is deleted/);
  t.equal(await page.locator(`tr[data-webhook-id="${id}"]`).count(), 0, 'gone from the list');

  type Listed = { actor: { email: string }; ipAddress?: string; changes?: Record<string, unknown> };
  const events = await eventually(async () => {
    const res = await admin.api.get(`/v1/events?resourceId=${id}`);
    const listed = (res.json?.data?.events ?? []) as Listed[];
    return listed.length >= 3 ? listed : null;
  });
  t.equal(events.length, 3, 'audit: created, secret rotated, deleted (the refused edit: nothing)');
  for (const e of events) {
    t.equal(e.actor.email, admin.email, 'who');
    t.equal(e.ipAddress, '127.0.0.1', 'from where');
  }
  await closePage(page);
});

t.test('lists page with links; a deep link comes back after sign-in; the tab has an icon', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  t.teardown(() => context.close());
  const page = await openPage(context);
  page.setDefaultTimeout(15_000);
  const missing: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 404) missing.push(r.url());
  });
  const deep = `${stack.origin}/settings/api-keys?owner=${encodeURIComponent(agent.email)}&status=all&limit=1`;
  await page.goto(deep);
  await page.waitForURL(/\/settings\/login\?return_to=/);
  await shot(page, 'sign-in-deep-link');
  await page.getByLabel('Email', { exact: true }).fill(admin.email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await Promise.all([page.waitForURL(deep), page.getByRole('button', { name: 'Sign in' }).click()]);
  t.equal(page.url(), deep, 'signed in, the browser is back on the page the link named');
  t.equal(await page.getByLabel('Owner', { exact: true }).inputValue(), agent.email, 'with its filters');
  t.equal(await page.locator('tr[data-key-id]').count(), 1, 'one row a page (limit=1)');
  t.match(await page.locator('#list caption').textContent(), /^API keys 1–1 of [2-9]\d*/);
  await shot(page, 'api-keys-paged');
  await Promise.all([page.waitForLoadState('load'), page.getByRole('link', { name: 'Next page →' }).click()]);
  t.match(page.url(), /[?&]page=2/, 'the next page is an address');
  t.match(await page.locator('#list caption').textContent(), /^API keys 2–2 of/);
  t.equal(await page.getByRole('link', { name: '← Previous page' }).count(), 1);

  const icon = await page.locator('link[rel=icon]').getAttribute('href');
  t.equal(icon, '/assets/favicon.svg');
  const res = await page.request.get(`${stack.origin}${icon}`);
  t.equal(res.status(), 200, 'the icon is served through the gateway');
  t.match(res.headers()['content-type'], /^image\/svg\+xml/);
  t.same(missing, [], 'no request of the pages answered 404 (no favicon.ico miss)');

  const elsewhere = await context.newPage();
  await elsewhere.goto(
    `${stack.origin}/settings/login?return_to=${encodeURIComponent('//evil.example/settings')}`,
  );
  t.equal(await elsewhere.locator('input[name=return_to]').count(), 0, 'an outside address is not carried');
  await elsewhere.close();
  await closePage(page);
});

t.test('users: link an existing user to an identity provider', async (t) => {
  const idp = `e2e${stack.run.replace(/[^a-z0-9]/g, '').slice(-10)}`;
  await stack.deskctlJson(['idp', 'create', idp, '--kind', 'scim']);
  const grace = await createActor(stack, 'agent', 'console-link');
  const page = await signIn(admin.email);
  await page.goto(`${stack.origin}/settings/users`);
  await page.getByLabel('Name or email contains', { exact: true }).fill(grace.email);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Filter' }).click()]);
  const row = page.locator(`tr[data-user-id="${grace.id}"]`);
  t.match(await row.textContent(), /local \(password\)/);
  await shot(page, 'users');
  await Promise.all([page.waitForLoadState('load'), row.getByRole('link', { name: /Link/ }).click()]);
  await page.getByLabel('Identity provider', { exact: true }).selectOption(idp);
  await page.getByLabel('External id', { exact: true }).fill('00u-console-e2e');
  await shot(page, 'user-link');
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Link user' }).click()]);
  t.match(
    await page.locator('[role=status]').textContent(),
    new RegExp(`is linked to ${idp} as 00u-console-e2e`),
  );
  t.match(await row.textContent(), /00u-console-e2e/);
  const user = expectOk(t, await admin.api.get(`/v1/users/${grace.id}`), 200, 'the user');
  t.match(user, { identityProvider: idp, externalId: '00u-console-e2e' });
  await closePage(page);
});

t.test('a non-admin is refused; a form without its CSRF token changes nothing', async (t) => {
  const page = await signIn(agent.email);
  t.equal(await page.title(), 'Administrators only · Support Desk');
  t.match(await page.locator('[role=alert]').textContent(), /is not an administrator/);
  await shot(page, 'refused');

  const adminPage = await signIn(admin.email);
  const cookies = await adminPage.context().cookies();
  const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
  const forged = await request(`${stack.origin}/settings/ip-allowlist`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'action=add&entry=192.0.2.1',
  });
  t.equal(forged.status, 403, 'refused without the token');
  await adminPage.goto(`${stack.origin}/settings/ip-allowlist`);
  t.equal(await adminPage.locator('#allowlist-empty').count(), 1, 'nothing was saved');
});

// The API reference (issue 29): every write runs as shown, the page names the product, the
// descriptions render, and the credential stays out of the curl snippet.
// Four posts only: every console POST counts against the gateway's 30 a minute per address
// (OAUTH_LIMIT_PER_IP), which this file's tests share; the refusals are services/identity's tests.
t.test('SLA policies: create from JSON, delete; the trash: restore', async (t) => {
  const page = await signIn(admin.email);
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('link', { name: 'SLA policies' }).click(),
  ]);
  t.equal(new URL(page.url()).pathname, '/settings/sla-policies', 'linked from the navigation');
  const name = `console-${stack.run
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(-12)}`;
  // Applies to a group no request is in: the shared stack's other files never get it.
  const policy = {
    name,
    position: 900,
    match: { groups: ['grp_01j9zq3k4m5n6p7q8r9s0t1v2w'] },
    targets: Object.fromEntries(
      ['critical', 'high', 'medium', 'low'].map((p) => [
        p,
        { firstResponseMinutes: 60, resolutionMinutes: 480 },
      ]),
    ),
  };
  const create = async (text: string) => {
    await page.goto(`${stack.origin}/settings/sla-policies`);
    await page.locator('details.create > summary', { hasText: 'Create a policy' }).click();
    await page.getByLabel('Policy (JSON)').fill(text);
    await Promise.all([
      page.waitForLoadState('load'),
      page.getByRole('button', { name: 'Create policy' }).click(),
    ]);
  };
  await create(JSON.stringify(policy));
  t.match(await page.locator('[role=status]').textContent(), new RegExp(`SLA policy ${name} is created`));
  const row = page.locator('tr[data-policy-id]', { hasText: name });
  const id = (await row.getAttribute('data-policy-id'))!;
  t.match(await row.textContent(), /900.*group grp_.*critical: 60 \/ 480 min.*UTC.*pending/s);
  await shot(page, 'sla-policies');
  await Promise.all([page.waitForLoadState('load'), row.getByRole('link', { name: /Delete/ }).click()]);
  t.match(await page.locator('[role=alert]').textContent(), new RegExp(`Delete the SLA policy ${name}\\?`));
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('button', { name: 'Delete policy' }).click(),
  ]);
  t.match(await page.locator('[role=status]').textContent(), new RegExp(`SLA policy ${id} is deleted`));
  t.equal(await page.locator(`tr[data-policy-id="${id}"]`).count(), 0, 'gone from the list');
  t.equal((await admin.api.get(`/v1/sla-policies/${id}`)).status, 404, 'and from the API');
  const events = await eventually(async () => {
    const res = await admin.api.get(`/v1/events?resourceId=${id}&type=system.config_changed`);
    const listed = (res.json?.data?.events ?? []) as { actor: { email: string }; ipAddress?: string }[];
    return listed.length >= 2 ? listed : null;
  });
  t.equal(events.length, 2, 'audit: created and deleted');
  for (const e of events) t.match(e, { actor: { email: admin.email }, ipAddress: '127.0.0.1' });

  const created = await admin.api.post('/v1/requests', {
    title: `Console trash <i>${stack.run}</i>`,
    description: 'deleted, then restored from the console',
    priority: 'low',
  });
  t.equal(created.status, 201, created.text);
  const requestId = created.json.data.id as string;
  t.equal((await admin.api.delete(`/v1/requests/${requestId}`)).status, 200);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('link', { name: 'Trash' }).click()]);
  const deleted = page.locator(`tr[data-request-id="${requestId}"]`);
  t.match(await deleted.textContent(), new RegExp(`Console trash <i>${stack.run}</i>`), 'the title as text');
  t.equal(await deleted.locator('time').count(), 2, 'when deleted, and when purged for good');
  await shot(page, 'trash');
  await Promise.all([
    page.waitForLoadState('load'),
    deleted.getByRole('button', { name: /Restore/ }).click(),
  ]);
  t.match(await page.locator('[role=status]').textContent(), new RegExp(`Request ${requestId} is restored`));
  t.equal(await page.locator(`tr[data-request-id="${requestId}"]`).count(), 0, 'out of the trash');
  t.equal((await admin.api.get(`/v1/requests/${requestId}`)).status, 200, 'readable again');
  await closePage(page);
});

t.test('/docs: Authorize, Try it out and Execute a create and a PATCH, as shown', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
  t.teardown(() => context.close());
  const page = await openPage(context);
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.origin}/docs`);
  await page.locator('.opblock').first().waitFor();

  const topbar = page.locator('.topbar');
  const logo = (await topbar.locator('img').getAttribute('src')) ?? '';
  t.match(logo, /^data:image\/svg\+xml;base64,/, 'our own logo');
  t.match(Buffer.from(logo.split(',')[1], 'base64').toString(), /Support Desk/);
  t.equal(await topbar.locator('select option:checked').textContent(), 'Support Desk API · /openapi.json');
  t.notMatch(await topbar.innerText(), /docs\/json|fastify/i, 'neither the copy’s address nor fastify');
  t.equal(await topbar.locator('input').count(), 0, 'no address to edit');
  t.equal((await page.locator('.info .url').textContent())?.trim(), '/openapi.json');
  await shot(page, 'docs');

  const list = await openOperation(page, 'requests', 'getV1Requests');
  const ok = await list.locator('tr.response[data-code="200"]').textContent();
  t.match(ok, /RateLimit-Policy.*e\.g\. "general";q=60;w=60/, 'the header descriptions render whole');

  const create = await openOperation(page, 'requests', 'postV1Requests');
  const refusal = (await create.locator('tr.response[data-code="400"]').textContent()) ?? '';
  t.match(refusal, /body\.title is required/, "the 400 example is this operation's own");
  t.notMatch(refusal, /query\.limit/);

  await authorize(page, admin.key);
  const created = await tryItOut(create, { read: ['Idempotency-Key'] });
  t.same(created.prefilled, { 'Idempotency-Key': '' }, 'the optional key is not pre-filled');
  t.equal(created.status, 201, `the example creates a request: ${created.body}`);
  // The secret is base64url and may itself hold '_': it is what follows the public id.
  const secret = admin.key.replace(/^sd_key_[0-9a-z]+_/, '');
  t.equal(secret.length, 43, 'the secret, whole');
  t.match(created.curl, /-H 'Authorization: Bearer sd_key_[0-9a-z]{26}_\*{8}'/, 'the curl masks the key');
  t.notOk(created.curl.includes(secret), 'and shows no part of its secret');
  const id = JSON.parse(created.body).data.id as string;

  const update = await openOperation(page, 'requests', 'patchV1RequestsById');
  const updated = await tryItOut(update, { read: ['If-Match'], fill: { id } });
  t.same(updated.prefilled, { 'If-Match': '' }, 'the optional precondition is not pre-filled');
  t.equal(updated.status, 200, `the example updates it: ${updated.body}`);
  t.match(JSON.parse(updated.body), { data: { id, status: 'resolved' } });
  await shot(page, 'docs-patched');
  expectOk(t, await admin.api.get(`/v1/requests/${id}`), 200, 'the change is there');
  await closePage(page);
});

// What /docs fills "Try it out" with must work as shown: each write's example body, in route
// order; a path id is the one an earlier example created, and so is an id the body cannot do
// without (a membership's user). Uploads are shown as a placeholder file. The stack may be shared
// with other files (the demo seeder's "Network" group): a create refused only because its unique
// name is taken (409 naming it) passed every check but that one, and its holder is used instead.
const HOLDERS: Record<string, (body: Record<string, string>) => Promise<string | undefined>> = {
  'POST /v1/users': async ({ email }) =>
    (await admin.api.get(`/v1/users?search=${encodeURIComponent(email)}`)).json?.data?.users?.find(
      (u: { email: string }) => u.email === email,
    )?.id,
  'POST /v1/groups': async ({ name }) =>
    (await admin.api.get('/v1/groups')).json?.data?.groups?.find((g: { name: string }) => g.name === name)
      ?.id,
};
t.test('every write example of the API reference succeeds as shown', async (t) => {
  const schemas = PUBLIC_ROUTE_SCHEMAS;
  const created = new Map<string, string>(); // id prefix → the last id created with it
  const prefixOf = (id: string) => id.split('_')[0];
  let tried = 0;
  for (const route of PUBLIC_ROUTES) {
    const body = ROUTE_EXAMPLES[routeKey(route)]?.request;
    if (body === undefined || schemas[routeKey(route)]?.consumes) continue;
    const params = (schemas[routeKey(route)]?.params as { properties?: Record<string, { pattern?: string }> })
      ?.properties;
    const path = route.path.replace(/:(\w+)/g, (_, name: string) => {
      const kind = idKindOfPattern(params?.[name]?.pattern);
      return (kind && created.get(ID_PREFIX[kind])) || `:${name}`;
    });
    if (path.includes(':')) continue;
    const json = JSON.parse(JSON.stringify(body), (_key, value) =>
      typeof value === 'string' && /^[a-z]{3}_[0-9a-z]{26}$/.test(value)
        ? (created.get(prefixOf(value)) ?? value)
        : value,
    );
    const res = await admin.api.send(route.method, path, { json });
    const taken =
      res.status === 409 && HOLDERS[routeKey(route)] && /already exists/.test(res.json?.error?.message);
    t.ok(
      (res.status >= 200 && res.status < 300) || taken,
      `${routeKey(route)} → ${res.status} ${JSON.stringify(res.json?.error ?? '')}`,
    );
    const id = taken ? await HOLDERS[routeKey(route)](json) : res.json?.data?.id;
    if (route.method === 'POST' && typeof id === 'string') created.set(prefixOf(id), id);
    tried += 1;
  }
  t.ok(tried >= 10, `${tried} examples tried`);
});
