import { SCOPE_DESCRIPTIONS, SCOPES, type Scope } from '@support-desk/contracts';

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Support Desk</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.8rem 0 .2rem}input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
button{margin:1rem .5rem 0 0;padding:.5rem 1.2rem}.error{color:#a00;background:#fee;padding:.6rem;border-radius:4px}
ul{padding-left:1.2rem}</style></head>
<body><h1>${esc(title)}</h1>
${body}
</body></html>`;
}

/** Security headers for every HTML page: no framing (clickjacking on consent), no caching, no scripts. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export function loginPage(opts: { csrf: string; request: string; email?: string; error?: string }): string {
  return layout(
    'Sign in',
    `${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
<form method="post" action="/oauth/login">
<input type="hidden" name="csrf_token" value="${esc(opts.csrf)}">
<input type="hidden" name="request" value="${esc(opts.request)}">
<label for="email">Email</label><input id="email" type="email" name="email" autocomplete="username" required value="${esc(opts.email ?? '')}">
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
    `<p><strong>${esc(opts.clientName)}</strong> asks for access to your Support Desk account
(<span id="who">${esc(opts.userEmail)}</span>):</p>
<ul id="scopes">${items}</ul>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf_token" value="${esc(opts.csrf)}">
<input type="hidden" name="request" value="${esc(opts.request)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
<form method="post" action="/oauth/logout">
<input type="hidden" name="csrf_token" value="${esc(opts.csrf)}">
<button type="submit">Not you? Sign out</button>
</form>`,
  );
}

export const errorPage = (message: string) =>
  layout(
    'Authorization error',
    `<p class="error" role="alert">${esc(message)}</p><p>The application that sent you here is misconfigured or the link is invalid. You have not been redirected.</p>`,
  );

export const messagePage = (title: string, message: string) => layout(title, `<p>${esc(message)}</p>`);
