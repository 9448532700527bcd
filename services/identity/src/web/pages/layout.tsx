import type { ComponentChildren, VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/**
 * The one look of every browser page identity serves: sign-in, consent and the settings console.
 * Pages are Preact components rendered to a string on the server (no client-side Preact): every
 * text and attribute value is escaped by the renderer, so no page escapes anything by hand.
 */

export const PRODUCT_NAME = 'Support Desk';

/** The one piece of raw markup: a doctype is no element, so the renderer cannot make it. */
const DOCTYPE = '<!doctype html>';

/** A whole page as the HTML document sent to the browser. */
export const renderDocument = (page: VNode) => `${DOCTYPE}\n${renderToString(page)}`;

export interface LayoutProps {
  title: string;
  /** `narrow` for the sign-in and consent cards, `wide` for the console's tables. */
  width?: 'narrow' | 'wide';
  /** Extra content in the header (the console's navigation and sign-out). */
  header?: ComponentChildren;
  /** Loads /assets/console.js (copy buttons, confirmations); no page carries inline script. */
  script?: boolean;
  children?: ComponentChildren;
}

export function Layout({ title, width = 'narrow', header, script, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · ${PRODUCT_NAME}`}</title>
        <link rel="stylesheet" href="/assets/desk.css" />
        <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
        {script && <script src="/assets/console.js" defer />}
      </head>
      <body class={width}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <div class="bar">
            <span class="brand">
              <span class="mark" aria-hidden="true">
                SD
              </span>
              {PRODUCT_NAME}
            </span>
            {header}
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
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

/** An error or notice box that screen readers announce (nothing when there is no message). */
export function AlertBox({
  message,
  kind = 'error',
}: {
  message: string | undefined;
  kind?: 'error' | 'warning' | 'success';
}) {
  if (!message) return null;
  return (
    <p class={kind} role={kind === 'success' ? 'status' : 'alert'}>
      {message}
    </p>
  );
}

/** The notice and the error a page was asked to show, in that order. */
export const Messages = ({ notice, error }: { notice?: string; error?: string }) => (
  <>
    <AlertBox message={notice} kind="success" />
    <AlertBox message={error} />
  </>
);
