import { PLANS, ROLE_SCOPES, ROLES, SCOPE_DESCRIPTIONS, SCOPES } from '@support-desk/contracts';
import { alertBox, esc } from '../oauth/page-layout.js';
import type { ApiKeyView } from '../use-cases/api-keys.js';
import { consolePage, csrfField, dateCell, type Frame, shownOnce, tags } from './frame.js';
import { createPanel, filterForm, type ListAddress, listSection, selectFilter, textFilter } from './lists.js';

/** What the create form was sent with, to show again after a refusal. */
export type KeyFormValues = Partial<
  Record<'name' | 'owner' | 'plan' | 'expires_days' | 'allowlist', string>
> & {
  scopes?: string[];
  rate_limit?: string;
  events_rate_limit?: string;
};

export interface ApiKeysPageOptions {
  frame: Frame;
  /** The page of keys shown, how many match in all, and the list's address (filters, page). */
  keys: ApiKeyView[];
  total: number;
  at: ListAddress & { filters: { owner?: string; status?: string } };
  /** The key just created: its value is shown this once. */
  created?: { id: string; key: string; name: string };
  notice?: string;
  error?: string;
  form?: KeyFormValues;
}

const STATUS_OPTIONS: [string, string][] = [
  ['active', 'Active'],
  ['inactive', 'Revoked or expired'],
  ['all', 'All'],
];

const roleLimits = ROLES.map((r) => `${r}: ${ROLE_SCOPES[r].join(', ')}`).join('; ');

function keyRow(k: ApiKeyView): string {
  const status = k.revokedAt
    ? '<span class="tag revoked">revoked</span>'
    : k.expiresAt && Date.parse(k.expiresAt) <= Date.now()
      ? '<span class="tag revoked">expired</span>'
      : `<a href="/settings/api-keys/revoke?id=${encodeURIComponent(k.id)}" aria-label="Revoke ${esc(k.name)}">Revoke</a>`;
  return `<tr data-key-id="${esc(k.id)}"><th scope="row" class="wrap">${esc(k.name)}<br><code>${esc(k.id)}</code></th>
<td class="wrap">${esc(k.owner.email)}</td><td>${tags(k.scopes)}</td>
<td>${esc(k.plan)}${k.limits ? `<br><span class="muted">${k.limits.general} / ${k.limits.events} a min</span>` : ''}</td>
<td class="wrap">${tags(k.allowlist)}</td><td>${dateCell(k.createdAt)}</td><td>${dateCell(k.expiresAt, 'never')}</td>
<td>${dateCell(k.lastUsedAt, 'never')}</td><td>${status}</td></tr>`;
}

function createForm(frame: Frame, v: KeyFormValues): string {
  const chosen = new Set(v.scopes ?? []);
  const scopeBoxes = SCOPES.map(
    (s) =>
      `<label><input type="checkbox" name="scopes" value="${s}"${chosen.has(s) ? ' checked' : ''}> <span><code>${s}</code> — ${esc(SCOPE_DESCRIPTIONS[s])}</span></label>`,
  ).join('');
  const plans = PLANS.map(
    (p) => `<option value="${p}"${(v.plan ?? 'standard') === p ? ' selected' : ''}>${p}</option>`,
  ).join('');
  return `<form method="post" action="/settings/api-keys">${csrfField(frame.csrf)}
<div class="grid">
<div><label for="key-name">Name</label><input id="key-name" name="name" type="text" required maxlength="100" value="${esc(v.name ?? '')}"></div>
<div><label for="key-owner">Owner (email)</label><input id="key-owner" name="owner" type="email" required value="${esc(v.owner ?? '')}" aria-describedby="owner-hint">
<p class="hint" id="owner-hint">The key acts as this user; it never gets more than the owner's role allows.</p></div>
<div><label for="key-plan">Plan</label><select id="key-plan" name="plan">${plans}</select></div>
<div><label for="key-expires">Expires in (days)</label><input id="key-expires" name="expires_days" type="number" min="1" max="3650" value="${esc(v.expires_days ?? '')}" aria-describedby="expires-hint">
<p class="hint" id="expires-hint">Empty: the key does not expire.</p></div>
</div>
<fieldset><legend>Scopes</legend>${scopeBoxes}
<p class="hint">Limited by the owner's role — ${esc(roleLimits)}.</p></fieldset>
<fieldset><legend>Enterprise limits (requests per minute)</legend>
<div class="grid"><div><label for="key-rate">General</label><input id="key-rate" name="rate_limit" type="number" min="1" max="1000000" value="${esc(v.rate_limit ?? '')}"></div>
<div><label for="key-events-rate">Events</label><input id="key-events-rate" name="events_rate_limit" type="number" min="1" max="1000000" value="${esc(v.events_rate_limit ?? '')}"></div></div>
<p class="hint">Only for the enterprise plan (defaults 300 and 120); other plans use the plan's limits.</p></fieldset>
<label for="key-allowlist">IP allowlist of this key</label><textarea id="key-allowlist" name="allowlist" aria-describedby="allowlist-hint">${esc(v.allowlist ?? '')}</textarea>
<p class="hint" id="allowlist-hint">Addresses or CIDRs, comma- or line-separated. Empty: any address the global list admits.</p>
<label for="key-password">Your password</label><input id="key-password" name="password" type="password" autocomplete="current-password" aria-describedby="password-hint">
<p class="hint" id="password-hint">Required to create a key with the <code>admin</code> scope.</p>
<button type="submit">Create API key</button>
</form>`;
}

export function apiKeysPage(opts: ApiKeysPageOptions): string {
  const { at } = opts;
  const created = opts.created
    ? `<section class="success" role="status" aria-labelledby="created-title"><h2 id="created-title">API key “${esc(opts.created.name)}” created</h2>
${shownOnce('new-key', 'The key', opts.created.key)}</section>`
    : '';
  const filters = filterForm(
    at,
    `${textFilter('owner', 'Owner', at.filters.owner ?? '', 'email', 'anyone (an email)')}
${selectFilter('status', 'Status', STATUS_OPTIONS, at.filters.status ?? 'active')}`,
  );
  const list = listSection({
    at,
    total: opts.total,
    noun: ['API key', 'API keys'],
    order: 'newest first',
    head: [
      'Name',
      'Owner',
      'Scopes',
      'Plan',
      'IP allowlist',
      'Created',
      'Expires',
      'Last used',
      '<span class="muted">Action</span>',
    ],
    rows: opts.keys.map(keyRow),
    empty:
      at.filters.owner || at.filters.status !== 'active'
        ? 'No API key matches these filters.'
        : 'No active API keys.',
  });
  const open = opts.form !== undefined;
  return consolePage(
    'API keys',
    '/settings/api-keys',
    opts.frame,
    `${created}${alertBox(opts.notice, 'success')}${alertBox(opts.error)}
<p class="muted">Keys let programs call the API as their owner. The value is shown once, when the key is created.</p>
${createPanel('create-key', 'Create an API key', createForm(opts.frame, opts.form ?? {}), open)}
${filters}
${list}`,
  );
}
