import { SCOPE_DESCRIPTIONS, SCOPES, type Scope } from '@support-desk/contracts';
import { alertBox, esc, layout, PRODUCT_NAME } from './page-layout.js';

export { PAGE_HEADERS } from './page-layout.js';

export interface LoginPageOptions {
  csrf: string;
  /** The authorization request to resume (OAuth); absent on the console's sign-in. */
  request?: string;
  email?: string;
  error?: string;
  /** Where the form posts: /oauth/login (default) or /settings/login. */
  action?: string;
  /** A line under the title saying what signing in is for. */
  intro?: string;
  /** The console page to go back to after sign-in (already checked: a safe /settings path). */
  returnTo?: string;
}

export function loginPage(opts: LoginPageOptions): string {
  const intro = opts.intro ?? `Sign in with your ${PRODUCT_NAME} account to continue.`;
  return layout(
    'Sign in',
    `<p class="muted">${esc(intro)}</p>
${alertBox(opts.error)}
<form method="post" action="${esc(opts.action ?? '/oauth/login')}">
<input type="hidden" name="csrf_token" value="${esc(opts.csrf)}">
${opts.request !== undefined ? `<input type="hidden" name="request" value="${esc(opts.request)}">` : ''}
${opts.returnTo ? `<input type="hidden" name="return_to" value="${esc(opts.returnTo)}">` : ''}
<label for="email">Email</label><input id="email" type="email" name="email" autocomplete="username" required autofocus value="${esc(opts.email ?? '')}">
<label for="password">Password</label><input id="password" type="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export function consentPage(opts: {
  csrf: string;
  request: string;
  clientName: string;
  userEmail: string;
  scopes: string[];
}): string {
  const items = SCOPES.filter((s) => opts.scopes.includes(s))
    .map((s) => `<li><code>${esc(s)}</code> — ${esc(SCOPE_DESCRIPTIONS[s as Scope] ?? s)}</li>`)
    .join('');
  return layout(
    'Authorize access',
    `<p><strong>${esc(opts.clientName)}</strong> asks for access to your ${PRODUCT_NAME} account
(<span id="who">${esc(opts.userEmail)}</span>):</p>
<ul id="scopes">${items}</ul>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf_token" value="${esc(opts.csrf)}">
<input type="hidden" name="request" value="${esc(opts.request)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<form method="post" action="/oauth/logout">
<input type="hidden" name="csrf_token" value="${esc(opts.csrf)}">
<button type="submit" class="secondary">Not you? Sign out</button>
</form>`,
  );
}

export const errorPage = (message: string) =>
  layout(
    'Authorization error',
    `${alertBox(message)}<p>The application that sent you here is misconfigured or the link is invalid. You have not been redirected.</p>`,
  );

export const messagePage = (title: string, message: string) => layout(title, `<p>${esc(message)}</p>`);
