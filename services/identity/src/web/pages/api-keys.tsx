import { ROLE_SCOPES, ROLES, SCOPE_DESCRIPTIONS, SCOPES } from '@support-desk/contracts';
import type { ApiKeyView } from '../../use-cases/api-keys.js';
import { consolePage, CsrfField, DateCell, type Frame, PlanSelect, ShownOnce, Tags } from './frame.js';
import { Messages } from './layout.js';
import {
  ActionHeading,
  CreatePanel,
  FilterForm,
  type ListAddress,
  ListSection,
  SelectFilter,
  TextFilter,
  RowHeading,
} from './lists.js';

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

function KeyStatus({ k }: { k: ApiKeyView }) {
  if (k.revokedAt) return <span class="tag revoked">revoked</span>;
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return <span class="tag revoked">expired</span>;
  return (
    <a href={`/settings/api-keys/revoke?id=${encodeURIComponent(k.id)}`} aria-label={`Revoke ${k.name}`}>
      Revoke
    </a>
  );
}

function KeyRow({ k }: { k: ApiKeyView }) {
  return (
    <tr data-key-id={k.id}>
      <RowHeading name={k.name}>
        <code>{k.id}</code>
      </RowHeading>
      <td class="wrap">{k.owner.email}</td>
      <td>
        <Tags values={k.scopes} />
      </td>
      <td>
        {k.plan}
        {k.limits && (
          <>
            <br />
            <span class="muted">{`${k.limits.general} / ${k.limits.events} a min`}</span>
          </>
        )}
      </td>
      <td class="wrap">
        <Tags values={k.allowlist} />
      </td>
      <td>
        <DateCell iso={k.createdAt} />
      </td>
      <td>
        <DateCell iso={k.expiresAt} none="never" />
      </td>
      <td>
        <DateCell iso={k.lastUsedAt} none="never" />
      </td>
      <td>
        <KeyStatus k={k} />
      </td>
    </tr>
  );
}

function CreateForm({ frame, v }: { frame: Frame; v: KeyFormValues }) {
  const chosen = new Set(v.scopes ?? []);
  return (
    <form method="post" action="/settings/api-keys">
      <CsrfField csrf={frame.csrf} />
      <div class="grid">
        <div>
          <label for="key-name">Name</label>
          <input id="key-name" name="name" type="text" required maxLength={100} value={v.name ?? ''} />
        </div>
        <div>
          <label for="key-owner">Owner (email)</label>
          <input
            id="key-owner"
            name="owner"
            type="email"
            required
            value={v.owner ?? ''}
            aria-describedby="owner-hint"
          />
          <p class="hint" id="owner-hint">
            The key acts as this user; it never gets more than the owner's role allows.
          </p>
        </div>
        <div>
          <PlanSelect id="key-plan" chosen={v.plan} />
        </div>
        <div>
          <label for="key-expires">Expires in (days)</label>
          <input
            id="key-expires"
            name="expires_days"
            type="number"
            min="1"
            max="3650"
            value={v.expires_days ?? ''}
            aria-describedby="expires-hint"
          />
          <p class="hint" id="expires-hint">
            Empty: the key does not expire.
          </p>
        </div>
      </div>
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((s) => (
          <label>
            <input type="checkbox" name="scopes" value={s} checked={chosen.has(s)} />{' '}
            <span>
              <code>{s}</code> — {SCOPE_DESCRIPTIONS[s]}
            </span>
          </label>
        ))}
        <p class="hint">Limited by the owner's role — {roleLimits}.</p>
      </fieldset>
      <fieldset>
        <legend>Enterprise limits (requests per minute)</legend>
        <div class="grid">
          <div>
            <label for="key-rate">General</label>
            <input
              id="key-rate"
              name="rate_limit"
              type="number"
              min="1"
              max="1000000"
              value={v.rate_limit ?? ''}
            />
          </div>
          <div>
            <label for="key-events-rate">Events</label>
            <input
              id="key-events-rate"
              name="events_rate_limit"
              type="number"
              min="1"
              max="1000000"
              value={v.events_rate_limit ?? ''}
            />
          </div>
        </div>
        <p class="hint">
          Only for the enterprise plan (defaults 300 and 120); other plans use the plan's limits.
        </p>
      </fieldset>
      <label for="key-allowlist">IP allowlist of this key</label>
      <textarea
        id="key-allowlist"
        name="allowlist"
        aria-describedby="allowlist-hint"
        value={v.allowlist ?? ''}
      />
      <p class="hint" id="allowlist-hint">
        Addresses or CIDRs, comma- or line-separated. Empty: any address the global list admits.
      </p>
      <label for="key-password">Your password</label>
      <input
        id="key-password"
        name="password"
        type="password"
        autocomplete="current-password"
        aria-describedby="password-hint"
      />
      <p class="hint" id="password-hint">
        Required to create a key with the <code>admin</code> scope.
      </p>
      <button type="submit">Create API key</button>
    </form>
  );
}

export function apiKeysPage(opts: ApiKeysPageOptions) {
  const { at } = opts;
  return consolePage(
    'API keys',
    '/settings/api-keys',
    opts.frame,
    <>
      {opts.created && (
        <section class="success" role="status" aria-labelledby="created-title">
          <h2 id="created-title">{`API key “${opts.created.name}” created`}</h2>
          <ShownOnce id="new-key" label="The key" value={opts.created.key} />
        </section>
      )}
      <Messages notice={opts.notice} error={opts.error} />
      <p class="muted">
        Keys let programs call the API as their owner. The value is shown once, when the key is created.
      </p>
      <CreatePanel id="create-key" label="Create an API key" open={opts.form !== undefined}>
        <CreateForm frame={opts.frame} v={opts.form ?? {}} />
      </CreatePanel>
      <FilterForm at={at}>
        <TextFilter
          name="owner"
          label="Owner"
          value={at.filters.owner ?? ''}
          type="email"
          placeholder="anyone (an email)"
        />
        <SelectFilter
          name="status"
          label="Status"
          options={STATUS_OPTIONS}
          chosen={at.filters.status ?? 'active'}
        />
      </FilterForm>
      <ListSection
        at={at}
        total={opts.total}
        noun={['API key', 'API keys']}
        order="newest first"
        head={[
          'Name',
          'Owner',
          'Scopes',
          'Plan',
          'IP allowlist',
          'Created',
          'Expires',
          'Last used',
          <ActionHeading />,
        ]}
        rows={opts.keys.map((k) => (
          <KeyRow k={k} />
        ))}
        empty={
          at.filters.owner || at.filters.status !== 'active'
            ? 'No API key matches these filters.'
            : 'No active API keys.'
        }
      />
    </>,
  );
}
