import { USER_STATUSES } from '@support-desk/contracts';
import { alertBox, esc } from '../oauth/page-layout.js';
import type { DirectoryUser } from '../use-cases/provider-links.js';
import { consolePage, csrfField, dateCell, type Frame } from './frame.js';
import { filterForm, type ListAddress, listSection, selectFilter, textFilter } from './lists.js';

const SECTION = '/settings/users';

export interface UsersPageOptions {
  frame: Frame;
  users: DirectoryUser[];
  total: number;
  at: ListAddress & { filters: { search?: string; idp?: string; status?: string } };
  /** The live identity provider connections. */
  providers: string[];
  /** The signed-in administrator (who cannot link themselves). */
  selfId: string;
  notice?: string;
  error?: string;
}

function userRow(u: DirectoryUser, selfId: string): string {
  const provider =
    u.identityProvider === 'local'
      ? '<span class="muted">local (password)</span>'
      : `${esc(u.identityProvider)}${u.externalId ? `<br><code>${esc(u.externalId)}</code>` : ''}`;
  const action =
    u.linkable && u.id !== selfId
      ? `<a href="${SECTION}/link?id=${encodeURIComponent(u.id)}" aria-label="Link ${esc(u.email)} to an identity provider">Link…</a>`
      : '<span class="muted">—</span>';
  return `<tr data-user-id="${esc(u.id)}"><th scope="row" class="wrap">${esc(u.name)}<br><span class="muted">${esc(u.email)}</span></th>
<td>${esc(u.role)}</td><td><span class="tag${u.status === 'active' ? '' : ' revoked'}">${esc(u.status)}</span></td>
<td class="wrap">${provider}</td><td>${dateCell(u.createdAt)}</td><td>${action}</td></tr>`;
}

/** The users, who manages each (a password, or an identity provider), and the way to link one. */
export function usersPage(opts: UsersPageOptions): string {
  const { at } = opts;
  const providerOptions: [string, string][] = [
    ['', 'Any'],
    ['local', 'local (password)'],
    ...opts.providers.map((p): [string, string] => [p, p]),
  ];
  const filters = filterForm(
    at,
    `${textFilter('search', 'Name or email contains', at.filters.search ?? '')}
${selectFilter('idp', 'Identity provider', providerOptions, at.filters.idp ?? '')}
${selectFilter('status', 'Status', [['', 'Any'], ...USER_STATUSES.map((s): [string, string] => [s, s])], at.filters.status ?? '')}`,
  );
  return consolePage(
    'Users',
    SECTION,
    opts.frame,
    `${alertBox(opts.notice, 'success')}${alertBox(opts.error)}
<p class="muted">Who signs in how. A user an identity provider should manage (it answers 409 when it tries to create an existing account) is linked here, under the provider's id for them; its SCIM calls then manage the user.</p>
${filters}
${listSection({
  at,
  total: opts.total,
  noun: ['user', 'users'],
  order: 'newest first',
  head: ['User', 'Role', 'Status', 'Identity provider', 'Created', '<span class="muted">Action</span>'],
  rows: opts.users.map((u) => userRow(u, opts.selfId)),
  empty: 'No user matches these filters.',
})}`,
  );
}

export interface LinkPageOptions {
  frame: Frame;
  user: { id: string; email: string; name: string };
  providers: string[];
  form?: { idp?: string; external_id?: string };
  error?: string;
}

/** Linking one user: which connection, under which external id, and what it changes. */
export function linkPage(opts: LinkPageOptions): string {
  const v = opts.form ?? {};
  const options = opts.providers
    .map((p) => `<option value="${esc(p)}"${v.idp === p ? ' selected' : ''}>${esc(p)}</option>`)
    .join('');
  const form = opts.providers.length
    ? `<form method="post" action="${SECTION}/link">${csrfField(opts.frame.csrf)}
<input type="hidden" name="id" value="${esc(opts.user.id)}">
<label for="link-idp">Identity provider</label><select id="link-idp" name="idp" required>${options}</select>
<label for="link-external-id">External id</label><input id="link-external-id" name="external_id" type="text" required maxlength="200" value="${esc(v.external_id ?? '')}" aria-describedby="link-external-id-hint">
<p class="hint" id="link-external-id-hint">The provider's id of this user: its SCIM <code>externalId</code> (Okta's user id, <code>00u…</code>; Entra ID's object id).</p>
<button type="submit">Link user</button><a class="button secondary" href="${SECTION}">Cancel</a></form>`
    : `<p class="warning" role="status">There is no identity provider connection to link to. Create one with <code>deskctl idp create</code>.</p>`;
  return consolePage(
    `Link ${opts.user.email}`,
    SECTION,
    opts.frame,
    `<p><a href="${SECTION}">← All users</a></p>${alertBox(opts.error)}
<p>After the link, <strong>${esc(opts.user.name)}</strong> is the provider's: its SCIM calls for that external id update and deactivate them, their name, email, role and status change only there, and they no longer sign in with a password (their API keys keep working until the provider deactivates them). An external id another user holds, or a user another provider manages, is refused.</p>
${form}`,
  );
}
