import { randomBytes } from 'node:crypto';
import { FORWARDED_HEADER } from '@support-desk/contracts';
import { createForwardedSigner } from '@support-desk/platform/core';
import { testEnv } from '@support-desk/platform/testing';
import type { Test } from 'tap';
import { s256 } from '../src/use-cases/authorize.js';

const signForwarded = createForwardedSigner(testEnv.principalKeys.signingKey);

/**
 * A minimal cookie-keeping browser for driving the login and consent forms without Chromium.
 * Given a client address, each call carries the forwarding assertion the gateway would sign for
 * a client at that address.
 */
/** What one of the browser's requests answered. */
export interface BrowserResponse {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

export class FormBrowser {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly base: string,
    readonly clientIp?: string,
  ) {}

  private forwarded(target: URL, method: string, body?: string): Record<string, string> {
    if (!this.clientIp) return {};
    const url = target.pathname + target.search;
    const call = { audience: 'identity', method, url, body };
    return { [FORWARDED_HEADER]: signForwarded({ clientIp: this.clientIp, userAgent: null }, call) };
  }

  private remember(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === '' || /max-age=0/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(url: string): Promise<BrowserResponse> {
    return this.send(url, {});
  }

  post(
    url: string,
    form: Record<string, string> | URLSearchParams,
    headers: Record<string, string> = {},
  ): Promise<BrowserResponse> {
    return this.send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });
  }

  private async send(
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<BrowserResponse> {
    const target = new URL(url, this.base);
    const res = await fetch(target, {
      ...init,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        ...this.forwarded(target, init.method ?? 'GET', init.body),
        ...init.headers,
      },
    });
    this.remember(res);
    return {
      status: res.status,
      location: res.headers.get('location'),
      html: await res.text(),
      headers: res.headers,
    };
  }
}

/** The hidden fields a sign-in or consent form posts back: its CSRF token and the request. */
export const formOf = (html: string) => ({
  csrf_token: hidden(html, 'csrf_token'),
  request: hidden(html, 'request'),
});

export function hidden(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no hidden field ${name}`);
  return m[1]
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

/**
 * An authorization request for a code with PKCE (S256), on `base`'s authorize endpoint: its URL,
 * and the verifier that redeems the code.
 */
export function pkceAuthorizeUrl(
  base: string,
  request: { client_id: string; redirect_uri: string; scope: string; state?: string },
): { url: URL; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL('/oauth/authorize', base);
  url.search = new URLSearchParams({
    response_type: 'code',
    state: 'st',
    ...request,
    code_challenge: s256(verifier),
    code_challenge_method: 'S256',
  }).toString();
  return { url, verifier };
}

/**
 * Walks authorize → login → consent → decision and returns the final redirect (to the client).
 * Reuses an existing session when the browser has one.
 */
export async function authorizeThroughForms(
  browser: FormBrowser,
  authorizeUrl: string,
  login: { email: string; password: string },
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  let page = await browser.get(authorizeUrl);
  if (page.status !== 200) throw new Error(`authorize answered ${page.status} ${page.location ?? ''}`);
  if (page.html.includes('action="/oauth/login"')) {
    const res = await browser.post('/oauth/login', {
      csrf_token: hidden(page.html, 'csrf_token'),
      request: hidden(page.html, 'request'),
      email: login.email,
      password: login.password,
    });
    if (res.status !== 303 || !res.location)
      throw new Error(`login answered ${res.status}: ${res.html.slice(0, 300)}`);
    page = await browser.get(res.location);
  }
  if (!page.html.includes('value="approve"'))
    throw new Error(`no consent page: ${page.status} ${page.html.slice(0, 300)}`);
  const res = await browser.post('/oauth/authorize', {
    csrf_token: hidden(page.html, 'csrf_token'),
    request: hidden(page.html, 'request'),
    decision,
  });
  // 303: the browser must not repost the form to the client, whichever the decision.
  if (res.status !== 303) throw new Error(`decision answered ${res.status}`);
  return new URL(res.location!);
}

/** A value that would run as script, or end an attribute, on a page that did not escape it. */
export const HOSTILE = `<script>alert(1)</script>"'&`;

/**
 * That `html` shows `HOSTILE` (`times` times at least) only escaped, as text or inside a quoted
 * attribute, and never as markup: no `<script>` of it, no quote that ends an attribute.
 */
export function shownEscaped(t: Test, html: string, what: string, times = 1): void {
  t.notOk(html.includes('<script>alert(1)'), `${what}: no script element of it`);
  t.notOk(html.includes('</script>"'), `${what}: no quote of it ends an attribute`);
  const escaped = html.match(/&lt;script(>|&gt;)alert\(1\)&lt;\/script(>|&gt;)&quot;('|&#39;)&amp;/g) ?? [];
  t.ok(escaped.length >= times, `${what}: shown as text (${escaped.length} of ${times})`);
}
