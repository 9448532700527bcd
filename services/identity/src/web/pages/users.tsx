import { USER_STATUSES } from '@support-desk/contracts';
import type { DirectoryUser } from '../../use-cases/provider-links.js';
import { consolePage, CsrfField, DateCell, type Frame, Missing } from './frame.js';
import { AlertBox, Messages } from './layout.js';
import {
  ActionHeading,
  FilterForm,
  type ListAddress,
  ListSection,
  SelectFilter,
  TextFilter,
  RowHeading,
} from './lists.js';

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

function UserRow({ u, selfId }: { u: DirectoryUser; selfId: string }) {
  return (
    <tr data-user-id={u.id}>
      <RowHeading name={u.name}>
        <span class="muted">{u.email}</span>
      </RowHeading>
      <td>{u.role}</td>
      <td>
        <span class={u.status === 'active' ? 'tag' : 'tag revoked'}>{u.status}</span>
      </td>
      <td class="wrap">
        {u.identityProvider === 'local' ? (
          <span class="muted">local (password)</span>
        ) : (
          <>
            {u.identityProvider}
            {u.externalId && (
              <>
                <br />
                <code>{u.externalId}</code>
              </>
            )}
          </>
        )}
      </td>
      <td>
        <DateCell iso={u.createdAt} />
      </td>
      <td>
        {u.linkable && u.id !== selfId ? (
          <a
            href={`${SECTION}/link?id=${encodeURIComponent(u.id)}`}
            aria-label={`Link ${u.email} to an identity provider`}
          >
            Link…
          </a>
        ) : (
          <span class="muted">—</span>
        )}
      </td>
    </tr>
  );
}

/** The users, who manages each (a password, or an identity provider), and the way to link one. */
export function usersPage(opts: UsersPageOptions) {
  const { at } = opts;
  const providerOptions: [string, string][] = [
    ['', 'Any'],
    ['local', 'local (password)'],
    ...opts.providers.map((p): [string, string] => [p, p]),
  ];
  const statusOptions: [string, string][] = [
    ['', 'Any'],
    ...USER_STATUSES.map((s): [string, string] => [s, s]),
  ];
  return consolePage(
    'Users',
    SECTION,
    opts.frame,
    <>
      <Messages notice={opts.notice} error={opts.error} />
      <p class="muted">
        Who signs in how. A user an identity provider should manage (it answers 409 when it tries to create an
        existing account) is linked here, under the provider's id for them; its SCIM calls then manage the
        user.
      </p>
      <FilterForm at={at}>
        <TextFilter name="search" label="Name or email contains" value={at.filters.search ?? ''} />
        <SelectFilter
          name="idp"
          label="Identity provider"
          options={providerOptions}
          chosen={at.filters.idp ?? ''}
        />
        <SelectFilter name="status" label="Status" options={statusOptions} chosen={at.filters.status ?? ''} />
      </FilterForm>
      <ListSection
        at={at}
        total={opts.total}
        noun={['user', 'users']}
        order="newest first"
        head={['User', 'Role', 'Status', 'Identity provider', 'Created', <ActionHeading />]}
        rows={opts.users.map((u) => (
          <UserRow u={u} selfId={opts.selfId} />
        ))}
        empty="No user matches these filters."
      />
    </>,
  );
}

export interface LinkPageOptions {
  frame: Frame;
  user: { id: string; email: string; name: string };
  providers: string[];
  form?: { idp?: string; external_id?: string };
  error?: string;
}

function LinkForm({ opts }: { opts: LinkPageOptions }) {
  const v = opts.form ?? {};
  if (!opts.providers.length)
    return (
      <p class="warning" role="status">
        There is no identity provider connection to link to. Create one with <code>deskctl idp create</code>.
      </p>
    );
  return (
    <form method="post" action={`${SECTION}/link`}>
      <CsrfField csrf={opts.frame.csrf} />
      <input type="hidden" name="id" value={opts.user.id} />
      <label for="link-idp">Identity provider</label>
      <select id="link-idp" name="idp" required>
        {opts.providers.map((p) => (
          <option value={p} selected={v.idp === p}>
            {p}
          </option>
        ))}
      </select>
      <label for="link-external-id">External id</label>
      <input
        id="link-external-id"
        name="external_id"
        type="text"
        required
        maxLength={200}
        value={v.external_id ?? ''}
        aria-describedby="link-external-id-hint"
      />
      <p class="hint" id="link-external-id-hint">
        The provider's id of this user: its SCIM <code>externalId</code> (Okta's user id, <code>00u…</code>;
        Entra ID's object id).
      </p>
      <button type="submit">Link user</button>
      <a class="button secondary" href={SECTION}>
        Cancel
      </a>
    </form>
  );
}

/** Linking one user: which connection, under which external id, and what it changes. */
export function linkPage(opts: LinkPageOptions) {
  return consolePage(
    `Link ${opts.user.email}`,
    SECTION,
    opts.frame,
    <>
      <p>
        <a href={SECTION}>← All users</a>
      </p>
      <AlertBox message={opts.error} />
      <p>
        After the link, <strong>{opts.user.name}</strong> is the provider's: its SCIM calls for that external
        id update and deactivate them, their name, email, role and status change only there, and they no
        longer sign in with a password (their API keys keep working until the provider deactivates them). An
        external id another user holds, or a user another provider manages, is refused.
      </p>
      <LinkForm opts={opts} />
    </>,
  );
}

/** The link page of a user that is not there. */
export const noSuchUserPage = (frame: Frame) =>
  consolePage(
    'Link a user',
    SECTION,
    frame,
    <Missing message="No user with that id." back={SECTION} label="Back to the users" />,
  );
