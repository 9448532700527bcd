/** The one look of every browser page identity serves: sign-in, consent and the settings console. */

export const PRODUCT_NAME = 'Support Desk';

export const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface LayoutOptions {
  /** `narrow` for the sign-in and consent cards, `wide` for the console's tables. */
  width?: 'narrow' | 'wide';
  /** Extra markup in the header (the console's navigation and sign-out). */
  header?: string;
  /** Loads /assets/console.js (copy buttons, confirmations); no page carries inline script. */
  script?: boolean;
}

export function layout(title: string, body: string, opts: LayoutOptions = {}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · ${PRODUCT_NAME}</title>
<link rel="stylesheet" href="/assets/desk.css">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
${opts.script ? '<script src="/assets/console.js" defer></script>' : ''}</head>
<body class="${opts.width ?? 'narrow'}">
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="bar"><span class="brand"><span class="mark" aria-hidden="true">SD</span>${PRODUCT_NAME}</span>${opts.header ?? ''}</div></header>
<main id="main" tabindex="-1"><h1>${esc(title)}</h1>
${body}
</main>
</body></html>`;
}

/**
 * Security headers for every HTML page: no framing (clickjacking on consent), no caching, and
 * no inline script or style (only the stylesheet and script identity serves under /assets/).
 * `form-action` is left out here: the consent form's answer redirects to the client, which
 * Chromium checks against it; the console's pages add it (`CONSOLE_PAGE_HEADERS`).
 */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export const CONSOLE_PAGE_HEADERS = {
  ...PAGE_HEADERS,
  'content-security-policy': `${PAGE_HEADERS['content-security-policy']}; form-action 'self'`,
};

/** An error or notice box that screen readers announce. */
export const alertBox = (message: string | undefined, kind: 'error' | 'warning' | 'success' = 'error') =>
  message ? `<p class="${kind}" role="${kind === 'success' ? 'status' : 'alert'}">${esc(message)}</p>` : '';
