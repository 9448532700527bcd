import fs from 'node:fs';
import http from 'node:http';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { CHROMIUM_PATH, chromiumLaunchOptions } from '@support-desk/platform/testing';
import { freePort } from './stack.js';

/** Headless Chromium (Debian's), launched the way CI can run it. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH))
    throw new Error(`Chromium not found at ${CHROMIUM_PATH} (apt-get install chromium)`);
  return chromium.launch(chromiumLaunchOptions());
}

/** A loopback OAuth redirect target: records every callback and answers a tiny page. */
export async function startCallbackServer(): Promise<{
  url: string;
  next(timeoutMs?: number): Promise<URL>;
  close(): Promise<void>;
}> {
  const port = await freePort();
  const received: URL[] = [];
  const waiters: ((u: URL) => void)[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (u.pathname !== '/callback') {
      res.writeHead(404).end(); // e.g. the browser's /favicon.ico
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>callback</title><p>You can close this window.</p>');
    const w = waiters.shift();
    if (w) w(u);
    else received.push(u);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next(timeoutMs = 20_000) {
      const ready = received.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no OAuth callback within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push((u) => {
          clearTimeout(timer);
          resolve(u);
        });
      });
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Bounds a Chromium step that takes no timeout of its own (opening or closing a page), so a
 * wedged browser fails that step with its name instead of stalling the whole file.
 */
async function within<T>(ms: number, what: string, step: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      step,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Chromium: ${what} took over ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export const openPage = (context: BrowserContext) => within(15_000, 'opening a page', context.newPage());
/**
 * Closing a page while it is still navigating can wedge Chromium's close (seen: a close issued
 * 26 ms before the callback page's load event finished only when the browser was torn down), so
 * the page settles first.
 */
export async function closePage(page: Page): Promise<void> {
  await page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined);
  await within(10_000, 'closing a page', page.close());
}

export interface AuthorizeResult {
  /** Whether a login form was shown (no session yet). */
  loggedIn: boolean;
  /** The consent page's text. */
  consentText: string;
  page: Page;
}

/**
 * Drives the login and consent pages like a person: opens the authorization URL, fills `email`
 * and `password` when the login form shows, then presses Approve (or Deny) on the consent page.
 */
export async function authorizeInBrowser(
  context: BrowserContext,
  authorizationUrl: string,
  credentials: { email: string; password: string },
  decision: 'approve' | 'deny' = 'approve',
): Promise<AuthorizeResult> {
  const page = await openPage(context);
  page.setDefaultTimeout(15_000);
  await page.goto(authorizationUrl);
  let loggedIn = false;
  const email = page.locator('input[name="email"]');
  if (await email.count()) {
    loggedIn = true;
    await email.fill(credentials.email);
    await page.locator('input[name="password"]').fill(credentials.password);
    await Promise.all([
      page.waitForLoadState('load'),
      page
        .locator('form:has(input[name="password"]) [type="submit"], form:has(input[name="password"]) button')
        .first()
        .click(),
    ]);
  }
  const button = page.getByRole('button', {
    name: decision === 'approve' ? /approve|allow|authori[sz]e/i : /deny|cancel|reject/i,
  });
  await button.first().waitFor({ state: 'visible' });
  const consentText = (await page.locator('body').textContent()) ?? '';
  await button.first().click();
  return { loggedIn, consentText, page };
}
