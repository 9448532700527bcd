import { alertBox, esc, layout } from '../oauth/page-layout.js';

/** The console's sections, in navigation order. */
export const SECTIONS = [
  { path: '/settings/api-keys', label: 'API keys' },
  { path: '/settings/ip-allowlist', label: 'IP allowlist' },
  { path: '/settings/oauth-clients', label: 'OAuth clients' },
  { path: '/settings/webhooks', label: 'Webhooks' },
  { path: '/settings/sla-policies', label: 'SLA policies' },
  { path: '/settings/trash', label: 'Trash' },
  { path: '/settings/users', label: 'Users' },
] as const;

export type SectionPath = (typeof SECTIONS)[number]['path'];

/** What every console page knows: who is signed in, and the CSRF token for its forms. */
export interface Frame {
  csrf: string;
  email: string;
}

export const csrfField = (csrf: string) => `<input type="hidden" name="csrf_token" value="${esc(csrf)}">`;

/** A console page: navigation (the current section marked), who is signed in, sign-out. */
export function consolePage(title: string, section: SectionPath | null, frame: Frame, body: string): string {
  const links = SECTIONS.map(
    (s) =>
      `<li><a href="${s.path}"${s.path === section ? ' aria-current="page"' : ''}>${esc(s.label)}</a></li>`,
  ).join('');
  const header = `<nav aria-label="Settings"><ul>${links}</ul></nav>
<div class="who"><span>Signed in as <strong>${esc(frame.email)}</strong></span>
<form method="post" action="/settings/logout">${csrfField(frame.csrf)}<button type="submit" class="secondary">Sign out</button></form></div>`;
  return layout(title, body, { width: 'wide', header, script: true });
}

/** A value shown once (a key, a client secret): read-only, selectable, with a copy button. */
export function shownOnce(id: string, label: string, value: string): string {
  return `<label for="${id}">${esc(label)}</label>
<div class="secret"><input id="${id}" type="text" readonly value="${esc(value)}" aria-describedby="${id}-hint">
<button type="button" class="secondary" data-copy="${id}">Copy</button></div>
<p class="hint" id="${id}-hint">Store it now: it is shown only once and cannot be recovered.</p>`;
}

/** The page a signed-in non-administrator gets. */
export const refusedBody = (email: string) =>
  `${alertBox(`${email} is not an administrator. Only users with the admin role can use the settings console.`)}
<p>Ask an administrator to change your role, or sign in with another account.</p>`;

/** A moment as the day, and the time (UTC) under it: narrow columns in wide tables. */
export const dateCell = (iso: string | null, none = '—') =>
  iso
    ? `<time datetime="${esc(iso)}">${esc(iso.slice(0, 10))}</time><br><span class="muted">${esc(iso.slice(11, 16))} UTC</span>`
    : `<span class="muted">${none}</span>`;

export const tags = (values: readonly string[]) =>
  values.map((v) => `<span class="tag">${esc(v)}</span>`).join('') || '<span class="muted">—</span>';

/** A confirmation step (revocations): what will happen, a danger button, and a way back. */
export function confirmBody(opts: {
  frame: Frame;
  action: string;
  id: string;
  question: string;
  consequence: string;
  button: string;
  back: string;
}): string {
  return `<p class="warning" role="alert">${esc(opts.question)}</p>
<p>${esc(opts.consequence)}</p>
<form method="post" action="${esc(opts.action)}">${csrfField(opts.frame.csrf)}
<input type="hidden" name="id" value="${esc(opts.id)}">
<button type="submit" class="danger">${esc(opts.button)}</button>
<a class="button secondary" href="${esc(opts.back)}">Cancel</a></form>`;
}
