import { PLANS } from '@support-desk/contracts';
import { alertBox, esc } from '../oauth/page-layout.js';
import type { OAuthClientView } from '../use-cases/oauth-client-admin.js';
import { consolePage, csrfField, dateCell, type Frame, shownOnce } from './frame.js';
import { createPanel, filterForm, type ListAddress, listSection, selectFilter } from './lists.js';

/** A change of the global list that waits for the administrator's "save anyway". */
export interface PendingAllowlistChange {
  action: 'add' | 'remove';
  entry: string;
  /** The list as it would be saved. */
  result: string[];
}

export interface AllowlistPageOptions {
  frame: Frame;
  /** The whole list (at most 256 entries), shown a page at a time. */
  list: string[];
  at: ListAddress;
  /** The address this page was requested from, as the gateway saw it. */
  address: string | null;
  pending?: PendingAllowlistChange;
  notice?: string;
  error?: string;
  entry?: string;
}

function pendingWarning(frame: Frame, p: PendingAllowlistChange, address: string | null): string {
  return `<div class="warning" role="alert"><p><strong>This list would lock out your current address${address ? ` (${esc(address)})` : ''}.</strong>
After saving it, API calls from here (API keys and OAuth access tokens) are refused: only ${p.result.map((e) => `<code>${esc(e)}</code>`).join(', ')} would be admitted.</p>
<form method="post" action="/settings/ip-allowlist">${csrfField(frame.csrf)}
<input type="hidden" name="action" value="${p.action}"><input type="hidden" name="entry" value="${esc(p.entry)}">
<input type="hidden" name="confirm" value="lockout">
<button type="submit" class="danger">Save anyway</button><a class="button secondary" href="/settings/ip-allowlist">Cancel</a></form></div>`;
}

export function allowlistPage(opts: AllowlistPageOptions): string {
  const { frame, at } = opts;
  const start = (at.page - 1) * at.limit;
  const rows = opts.list.slice(start, start + at.limit).map(
    (
      e,
    ) => `<tr><td><code>${esc(e)}</code></td><td><form method="post" action="/settings/ip-allowlist">${csrfField(frame.csrf)}
<input type="hidden" name="action" value="remove"><input type="hidden" name="entry" value="${esc(e)}">
<button type="submit" class="link" aria-label="Remove ${esc(e)}">Remove</button></form></td></tr>`,
  );
  const list = opts.list.length
    ? listSection({
        at,
        total: opts.list.length,
        noun: ['IP allowlist entry', 'IP allowlist entries'],
        head: ['Address or CIDR', '<span class="muted">Action</span>'],
        rows,
        empty: '',
      })
    : '<p class="muted" id="allowlist-empty">The list is empty: the API may be called from any address (each API key can still have its own list).</p>';
  return consolePage(
    'IP allowlist',
    '/settings/ip-allowlist',
    frame,
    `${opts.pending ? pendingWarning(frame, opts.pending, opts.address) : ''}${alertBox(opts.notice, 'success')}${alertBox(opts.error)}
<p class="muted">When the list is not empty, every API call (API key or OAuth access token) must come from an address it admits. Your address: <code id="my-address">${esc(opts.address ?? 'unknown')}</code>.</p>
<h2 id="add-entry">Add an address or CIDR</h2>
<form method="post" action="/settings/ip-allowlist" aria-labelledby="add-entry">${csrfField(frame.csrf)}
<input type="hidden" name="action" value="add">
<label for="entry">Address or CIDR</label><input id="entry" name="entry" type="text" required maxlength="64" placeholder="203.0.113.0/24" value="${esc(opts.entry ?? '')}" aria-describedby="entry-hint">
<p class="hint" id="entry-hint">IPv4 or IPv6, e.g. <code>203.0.113.7</code>, <code>10.0.0.0/8</code>, <code>2001:db8::/32</code>.</p>
<button type="submit">Add</button></form>
<h2 id="entries">Entries</h2>
${list}`,
  );
}

export interface OAuthClientsPageOptions {
  frame: Frame;
  /** The page of clients shown, how many match, and the list's address (its status filter). */
  clients: OAuthClientView[];
  total: number;
  at: ListAddress & { filters: { status?: string } };
  created?: { client_id: string; client_secret?: string; name: string };
  notice?: string;
  error?: string;
  form?: { name?: string; redirect_uris?: string; type?: string; plan?: string };
}

function clientRow(c: OAuthClientView): string {
  const action = c.revokedAt
    ? '<span class="tag revoked">revoked</span>'
    : `<a href="/settings/oauth-clients/revoke?id=${encodeURIComponent(c.client_id)}" aria-label="Revoke ${esc(c.name)}">Revoke</a>`;
  return `<tr data-client-id="${esc(c.client_id)}"><th scope="row" class="wrap">${esc(c.name)}<br><code>${esc(c.client_id)}</code></th>
<td>${c.public ? 'public (PKCE)' : 'confidential'}</td><td class="wrap">${c.redirect_uris.map((u) => `<code>${esc(u)}</code>`).join('<br>')}</td>
<td>${esc(c.plan)}</td><td>${dateCell(c.createdAt)}</td><td>${action}</td></tr>`;
}

export function oauthClientsPage(opts: OAuthClientsPageOptions): string {
  const { frame } = opts;
  const v = opts.form ?? {};
  const created = opts.created
    ? `<section class="success" role="status" aria-labelledby="created-title"><h2 id="created-title">OAuth client “${esc(opts.created.name)}” registered</h2>
${shownOnce('new-client-id', 'client_id', opts.created.client_id).replace(/<p class="hint"[^]*?<\/p>/, '')}
${opts.created.client_secret ? shownOnce('new-client-secret', 'client_secret', opts.created.client_secret) : '<p>A public client has no secret: it must use PKCE (S256).</p>'}</section>`
    : '';
  const { at } = opts;
  const list = listSection({
    at,
    total: opts.total,
    noun: ['OAuth client', 'OAuth clients'],
    order: 'newest first',
    head: ['Name', 'Type', 'Redirect URIs', 'Plan', 'Registered', '<span class="muted">Action</span>'],
    rows: opts.clients.map(clientRow),
    empty:
      at.filters.status === 'active' ? 'No active OAuth clients.' : 'No OAuth client matches this filter.',
  });
  const filters = filterForm(
    at,
    selectFilter(
      'status',
      'Status',
      [
        ['active', 'Active'],
        ['inactive', 'Revoked'],
        ['all', 'All'],
      ],
      at.filters.status ?? 'active',
    ),
  );
  const type = v.type === 'public' ? 'public' : 'confidential';
  const plans = PLANS.map(
    (p) => `<option value="${p}"${(v.plan ?? 'standard') === p ? ' selected' : ''}>${p}</option>`,
  ).join('');
  return consolePage(
    'OAuth clients',
    '/settings/oauth-clients',
    frame,
    `${created}${alertBox(opts.notice, 'success')}${alertBox(opts.error)}
<p class="muted">Applications that act for a user after the user approves them on the consent page.</p>
${createPanel(
  'register-client',
  'Register a client',
  `<form method="post" action="/settings/oauth-clients">${csrfField(frame.csrf)}
<label for="client-name">Name</label><input id="client-name" name="name" type="text" required maxlength="100" value="${esc(v.name ?? '')}">
<label for="client-uris">Redirect URIs</label><textarea id="client-uris" name="redirect_uris" required aria-describedby="uris-hint">${esc(v.redirect_uris ?? '')}</textarea>
<p class="hint" id="uris-hint">One per line; https, or http on a loopback host; matched exactly.</p>
<fieldset><legend>Type</legend>
<label><input type="radio" name="type" value="confidential"${type === 'confidential' ? ' checked' : ''}> Confidential — a server that can keep a secret</label>
<label><input type="radio" name="type" value="public"${type === 'public' ? ' checked' : ''}> Public — a browser or mobile app (no secret, PKCE)</label></fieldset>
<label for="client-plan">Plan</label><select id="client-plan" name="plan">${plans}</select>
<button type="submit">Register client</button></form>`,
  opts.form !== undefined,
)}
${filters}
${list}`,
  );
}
