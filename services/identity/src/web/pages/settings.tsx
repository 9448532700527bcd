import type { OAuthClientView } from '../../use-cases/oauth-client-admin.js';
import { consolePage, CsrfField, DateCell, type Frame, PlanSelect, ShownOnce } from './frame.js';
import { Messages } from './layout.js';
import {
  ActionHeading,
  CreatePanel,
  FilterForm,
  type ListAddress,
  ListSection,
  SelectFilter,
  RowHeading,
} from './lists.js';

/** A change of the global list that waits for the administrator's "save anyway". */
interface PendingAllowlistChange {
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

function PendingWarning({
  frame,
  p,
  address,
}: {
  frame: Frame;
  p: PendingAllowlistChange;
  address: string | null;
}) {
  return (
    <div class="warning" role="alert">
      <p>
        <strong>{`This list would lock out your current address${address ? ` (${address})` : ''}.`}</strong>
        {'\n'}After saving it, API calls from here (API keys and OAuth access tokens) are refused: only{' '}
        {p.result.map((e, i) => (
          <>
            {i > 0 && ', '}
            <code>{e}</code>
          </>
        ))}{' '}
        would be admitted.
      </p>
      <form method="post" action="/settings/ip-allowlist">
        <CsrfField csrf={frame.csrf} />
        <input type="hidden" name="action" value={p.action} />
        <input type="hidden" name="entry" value={p.entry} />
        <input type="hidden" name="confirm" value="lockout" />
        <button type="submit" class="danger">
          Save anyway
        </button>
        <a class="button secondary" href="/settings/ip-allowlist">
          Cancel
        </a>
      </form>
    </div>
  );
}

function EntryRow({ frame, entry }: { frame: Frame; entry: string }) {
  return (
    <tr>
      <td>
        <code>{entry}</code>
      </td>
      <td>
        <form method="post" action="/settings/ip-allowlist">
          <CsrfField csrf={frame.csrf} />
          <input type="hidden" name="action" value="remove" />
          <input type="hidden" name="entry" value={entry} />
          <button type="submit" class="link" aria-label={`Remove ${entry}`}>
            Remove
          </button>
        </form>
      </td>
    </tr>
  );
}

export function allowlistPage(opts: AllowlistPageOptions) {
  const { frame, at } = opts;
  const start = (at.page - 1) * at.limit;
  return consolePage(
    'IP allowlist',
    '/settings/ip-allowlist',
    frame,
    <>
      {opts.pending && <PendingWarning frame={frame} p={opts.pending} address={opts.address} />}
      <Messages notice={opts.notice} error={opts.error} />
      <p class="muted">
        When the list is not empty, every API call (API key or OAuth access token) must come from an address
        it admits. Your address: <code id="my-address">{opts.address ?? 'unknown'}</code>.
      </p>
      <h2 id="add-entry">Add an address or CIDR</h2>
      <form method="post" action="/settings/ip-allowlist" aria-labelledby="add-entry">
        <CsrfField csrf={frame.csrf} />
        <input type="hidden" name="action" value="add" />
        <label for="entry">Address or CIDR</label>
        <input
          id="entry"
          name="entry"
          type="text"
          required
          maxLength={64}
          placeholder="203.0.113.0/24"
          value={opts.entry ?? ''}
          aria-describedby="entry-hint"
        />
        <p class="hint" id="entry-hint">
          IPv4 or IPv6, e.g. <code>203.0.113.7</code>, <code>10.0.0.0/8</code>, <code>2001:db8::/32</code>.
        </p>
        <button type="submit">Add</button>
      </form>
      <h2 id="entries">Entries</h2>
      {opts.list.length ? (
        <ListSection
          at={at}
          total={opts.list.length}
          noun={['IP allowlist entry', 'IP allowlist entries']}
          head={['Address or CIDR', <ActionHeading />]}
          rows={opts.list.slice(start, start + at.limit).map((e) => (
            <EntryRow frame={frame} entry={e} />
          ))}
          empty=""
        />
      ) : (
        <p class="muted" id="allowlist-empty">
          The list is empty: the API may be called from any address (each API key can still have its own
          list).
        </p>
      )}
    </>,
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

function ClientRow({ c }: { c: OAuthClientView }) {
  return (
    <tr data-client-id={c.client_id}>
      <RowHeading name={c.name}>
        <code>{c.client_id}</code>
      </RowHeading>
      <td>{c.public ? 'public (PKCE)' : 'confidential'}</td>
      <td class="wrap">
        {c.redirect_uris.map((u, i) => (
          <>
            {i > 0 && <br />}
            <code>{u}</code>
          </>
        ))}
      </td>
      <td>{c.plan}</td>
      <td>
        <DateCell iso={c.createdAt} />
      </td>
      <td>
        {c.revokedAt ? (
          <span class="tag revoked">revoked</span>
        ) : (
          <a
            href={`/settings/oauth-clients/revoke?id=${encodeURIComponent(c.client_id)}`}
            aria-label={`Revoke ${c.name}`}
          >
            Revoke
          </a>
        )}
      </td>
    </tr>
  );
}

function RegisterForm({ frame, v }: { frame: Frame; v: NonNullable<OAuthClientsPageOptions['form']> }) {
  const type = v.type === 'public' ? 'public' : 'confidential';
  return (
    <form method="post" action="/settings/oauth-clients">
      <CsrfField csrf={frame.csrf} />
      <label for="client-name">Name</label>
      <input id="client-name" name="name" type="text" required maxLength={100} value={v.name ?? ''} />
      <label for="client-uris">Redirect URIs</label>
      <textarea
        id="client-uris"
        name="redirect_uris"
        required
        aria-describedby="uris-hint"
        value={v.redirect_uris ?? ''}
      />
      <p class="hint" id="uris-hint">
        One per line; https, or http on a loopback host; matched exactly.
      </p>
      <fieldset>
        <legend>Type</legend>
        <label>
          <input type="radio" name="type" value="confidential" checked={type === 'confidential'} />{' '}
          Confidential — a server that can keep a secret
        </label>
        <label>
          <input type="radio" name="type" value="public" checked={type === 'public'} /> Public — a browser or
          mobile app (no secret, PKCE)
        </label>
      </fieldset>
      <PlanSelect id="client-plan" chosen={v.plan} />
      <button type="submit">Register client</button>
    </form>
  );
}

export function oauthClientsPage(opts: OAuthClientsPageOptions) {
  const { frame, at, created } = opts;
  return consolePage(
    'OAuth clients',
    '/settings/oauth-clients',
    frame,
    <>
      {created && (
        <section class="success" role="status" aria-labelledby="created-title">
          <h2 id="created-title">{`OAuth client “${created.name}” registered`}</h2>
          <ShownOnce id="new-client-id" label="client_id" value={created.client_id} warn={false} />
          {created.client_secret ? (
            <ShownOnce id="new-client-secret" label="client_secret" value={created.client_secret} />
          ) : (
            <p>A public client has no secret: it must use PKCE (S256).</p>
          )}
        </section>
      )}
      <Messages notice={opts.notice} error={opts.error} />
      <p class="muted">Applications that act for a user after the user approves them on the consent page.</p>
      <CreatePanel id="register-client" label="Register a client" open={opts.form !== undefined}>
        <RegisterForm frame={frame} v={opts.form ?? {}} />
      </CreatePanel>
      <FilterForm at={at}>
        <SelectFilter
          name="status"
          label="Status"
          options={[
            ['active', 'Active'],
            ['inactive', 'Revoked'],
            ['all', 'All'],
          ]}
          chosen={at.filters.status ?? 'active'}
        />
      </FilterForm>
      <ListSection
        at={at}
        total={opts.total}
        noun={['OAuth client', 'OAuth clients']}
        order="newest first"
        head={['Name', 'Type', 'Redirect URIs', 'Plan', 'Registered', <ActionHeading />]}
        rows={opts.clients.map((c) => (
          <ClientRow c={c} />
        ))}
        empty={
          at.filters.status === 'active' ? 'No active OAuth clients.' : 'No OAuth client matches this filter.'
        }
      />
    </>,
  );
}
