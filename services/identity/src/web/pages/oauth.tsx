import { SCOPE_DESCRIPTIONS, SCOPES, type Scope } from '@support-desk/contracts';
import { AlertBox, Layout, PRODUCT_NAME } from './layout.js';

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

/** The hidden CSRF field every form of identity's pages carries (checked before any handler). */
export const CsrfField = ({ csrf }: { csrf: string }) => (
  <input type="hidden" name="csrf_token" value={csrf} />
);

export function loginPage(opts: LoginPageOptions) {
  const intro = opts.intro ?? `Sign in with your ${PRODUCT_NAME} account to continue.`;
  return (
    <Layout title="Sign in">
      <p class="muted">{intro}</p>
      <AlertBox message={opts.error} />
      <form method="post" action={opts.action ?? '/oauth/login'}>
        <CsrfField csrf={opts.csrf} />
        {opts.request !== undefined && <input type="hidden" name="request" value={opts.request} />}
        {opts.returnTo && <input type="hidden" name="return_to" value={opts.returnTo} />}
        <label for="email">Email</label>
        <input
          id="email"
          type="email"
          name="email"
          autocomplete="username"
          required
          autofocus
          value={opts.email ?? ''}
        />
        <label for="password">Password</label>
        <input id="password" type="password" name="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  );
}

export function consentPage(opts: {
  csrf: string;
  request: string;
  clientName: string;
  userEmail: string;
  scopes: string[];
}) {
  const granted = SCOPES.filter((s) => opts.scopes.includes(s));
  return (
    <Layout title="Authorize access">
      <p>
        <strong>{opts.clientName}</strong> asks for access to your {PRODUCT_NAME} account (
        <span id="who">{opts.userEmail}</span>):
      </p>
      <ul id="scopes">
        {granted.map((s) => (
          <li>
            <code>{s}</code> — {SCOPE_DESCRIPTIONS[s as Scope] ?? s}
          </li>
        ))}
      </ul>
      <form method="post" action="/oauth/authorize">
        <CsrfField csrf={opts.csrf} />
        <input type="hidden" name="request" value={opts.request} />
        <button type="submit" name="decision" value="approve">
          Approve
        </button>
        <button type="submit" name="decision" value="deny" class="secondary">
          Deny
        </button>
      </form>
      <form method="post" action="/oauth/logout">
        <CsrfField csrf={opts.csrf} />
        <button type="submit" class="secondary">
          Not you? Sign out
        </button>
      </form>
    </Layout>
  );
}

export const errorPage = (message: string) => (
  <Layout title="Authorization error">
    <AlertBox message={message} />
    <p>
      The application that sent you here is misconfigured or the link is invalid. You have not been
      redirected.
    </p>
  </Layout>
);

export const messagePage = (title: string, message: string) => (
  <Layout title={title}>
    <p>{message}</p>
  </Layout>
);
