import type { WebhookDelivery, WebhookSubscription, WebhookWithSecret } from '@support-desk/contracts';
import type { ComponentChildren } from 'preact';
import { consolePage, CsrfField, DateCell, type Frame, ShownOnce, Tags } from './frame.js';
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

/** What a subscription form was sent with, to show again after a refusal. */
export interface WebhookFormValues {
  url?: string;
  events?: string;
  description?: string;
  active?: boolean;
}

/** Messages above a page: one result, one refusal. */
interface PageMessages {
  notice?: string;
  error?: string;
}

const SECTION = '/settings/webhooks';
const editHref = (id: string) => `${SECTION}/edit?id=${encodeURIComponent(id)}`;

const StatusCell = ({ w }: { w: WebhookSubscription }) =>
  w.active ? (
    <span class="tag">active</span>
  ) : (
    <>
      <span class="tag revoked">disabled</span>
      <br />
      <span class="muted">{w.disabledReason ?? 'manual'}</span>
    </>
  );

/** A secret just made (create, rotation): shown this once, with the copy button. */
function SecretBox({
  title,
  w,
  children,
}: {
  title: string;
  w: WebhookWithSecret;
  children?: ComponentChildren;
}) {
  return (
    <section class="success" role="status" aria-labelledby="secret-title">
      <h2 id="secret-title">{title}</h2>
      <ShownOnce id="new-secret" label="Signing secret" value={w.secret} />
      {children}
    </section>
  );
}

function SubscriptionFields({ prefix, v }: { prefix: string; v: WebhookFormValues }) {
  return (
    <>
      <label for={`${prefix}-url`}>URL</label>
      <input
        id={`${prefix}-url`}
        name="url"
        type="url"
        required
        maxLength={2048}
        placeholder="https://hooks.example.com/desk"
        value={v.url ?? ''}
        aria-describedby={`${prefix}-url-hint`}
      />
      <p class="hint" id={`${prefix}-url-hint`}>
        Deliveries are POSTed here, signed (Standard Webhooks). An https URL without a fragment; private,
        loopback and metadata addresses are refused unless the operator allows them.
      </p>
      <label for={`${prefix}-events`}>Events</label>
      <input
        id={`${prefix}-events`}
        name="events"
        type="text"
        required
        maxLength={2000}
        placeholder="request.*, user.created"
        value={v.events ?? ''}
        aria-describedby={`${prefix}-events-hint`}
      />
      <p class="hint" id={`${prefix}-events-hint`}>
        Comma-separated: an event type (<code>request.created</code>), a family (<code>request.*</code>) or{' '}
        <code>*</code> for every event.
      </p>
      <label for={`${prefix}-description`}>Description</label>
      <input
        id={`${prefix}-description`}
        name="description"
        type="text"
        maxLength={500}
        value={v.description ?? ''}
      />
      <label>
        <input type="checkbox" name="active" value="on" checked={v.active !== false} />{' '}
        <span>Active — deliver events (while inactive they are recorded and held)</span>
      </label>
    </>
  );
}

export interface WebhooksPageOptions extends PageMessages {
  frame: Frame;
  /** null: the webhooks service is not answering (the page says so; the rest still works). */
  webhooks: WebhookSubscription[] | null;
  total: number;
  at: ListAddress;
  created?: WebhookWithSecret;
  form?: WebhookFormValues;
}

function SubscriptionRow({ w }: { w: WebhookSubscription }) {
  return (
    <tr data-webhook-id={w.id}>
      <RowHeading name={<code>{w.url}</code>}>
        <span class="muted">{w.id}</span>
      </RowHeading>
      <td>
        <Tags values={w.events} />
      </td>
      <td>
        <StatusCell w={w} />
      </td>
      <td class="wrap">{w.description || <span class="muted">—</span>}</td>
      <td>
        <DateCell iso={w.createdAt} />
      </td>
      <td>
        <a href={editHref(w.id)} aria-label={`Manage ${w.url}`}>
          Manage
        </a>
      </td>
    </tr>
  );
}

/** The create form at the top, then the subscriptions, a page at a time. */
export function webhooksPage(opts: WebhooksPageOptions) {
  const { frame, webhooks } = opts;
  return consolePage(
    'Webhooks',
    SECTION,
    frame,
    <>
      {opts.created && <SecretBox title={`Webhook for ${opts.created.url} created`} w={opts.created} />}
      <Messages notice={opts.notice} error={opts.error} />
      <p class="muted">
        Subscriptions receive the events they ask for as signed HTTP POSTs. The signing secret is shown once,
        when it is made.
      </p>
      {webhooks !== null && (
        <>
          <CreatePanel id="create-webhook" label="Create a subscription" open={opts.form !== undefined}>
            <form method="post" action={SECTION}>
              <CsrfField csrf={frame.csrf} />
              <SubscriptionFields prefix="create" v={opts.form ?? {}} />
              <button type="submit">Create subscription</button>
            </form>
          </CreatePanel>
          <ListSection
            at={opts.at}
            total={opts.total}
            noun={['subscription', 'subscriptions']}
            order="newest first"
            head={['URL', 'Events', 'Status', 'Description', 'Created', <ActionHeading />]}
            rows={webhooks.map((w) => (
              <SubscriptionRow w={w} />
            ))}
            empty="No webhook subscriptions yet."
          />
        </>
      )}
    </>,
  );
}

export interface WebhookPageOptions extends PageMessages {
  frame: Frame;
  webhook: WebhookSubscription;
  /** A page of its deliveries (newest first) and how many match, or null when they could not be read. */
  deliveries: { items: WebhookDelivery[]; total: number } | null;
  /** The deliveries' address: this page, with its status filter and page. */
  at: ListAddress & { filters: { id: string; status?: string } };
  /** After a rotation: the new secret, this once. */
  rotated?: WebhookWithSecret;
  form?: WebhookFormValues;
}

function LastAttempt({ d }: { d: WebhookDelivery }) {
  const a = d.attempts.at(-1);
  if (!a) return <span class="muted">none yet</span>;
  return a.status !== null ? <>{`HTTP ${a.status}`}</> : <span class="wrap">{a.error ?? 'error'}</span>;
}

/** The hidden fields of a form about one subscription: the CSRF token and its id. */
const Hidden = ({ frame, id }: { frame: Frame; id: string }) => (
  <>
    <CsrfField csrf={frame.csrf} />
    <input type="hidden" name="id" value={id} />
  </>
);

function DeliveryRow({ frame, webhookId, d }: { frame: Frame; webhookId: string; d: WebhookDelivery }) {
  return (
    <tr data-delivery-id={d.id}>
      <RowHeading name={<code>{d.eventType}</code>} wrap={false}>
        <span class="muted">{d.id}</span>
      </RowHeading>
      <td>
        <span class={d.status === 'failed' ? 'tag revoked' : 'tag'}>{d.status}</span>
      </td>
      <td>{d.attempts.length}</td>
      <td>
        <LastAttempt d={d} />
      </td>
      <td>
        <DateCell iso={d.nextAttemptAt} />
      </td>
      <td>
        <DateCell iso={d.createdAt} />
      </td>
      <td>
        {d.status === 'pending' ? (
          <span class="muted">queued</span>
        ) : (
          <form method="post" action={`${SECTION}/replay`}>
            <Hidden frame={frame} id={webhookId} />
            <input type="hidden" name="delivery" value={d.id} />
            <button type="submit" class="secondary" aria-label={`Replay ${d.id}`}>
              Replay
            </button>
          </form>
        )}
      </td>
    </tr>
  );
}

const DELIVERY_FILTER: [string, string][] = [
  ['', 'Any'],
  ['pending', 'Pending'],
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
];

function Deliveries({ frame, w, opts }: { frame: Frame; w: WebhookSubscription; opts: WebhookPageOptions }) {
  const { at, deliveries } = opts;
  return (
    <>
      <h2 id="deliveries">Deliveries</h2>
      <FilterForm at={at} clearHref={editHref(w.id)}>
        <input type="hidden" name="id" value={w.id} />
        <SelectFilter
          name="status"
          label="Status"
          options={DELIVERY_FILTER}
          chosen={at.filters.status ?? ''}
        />
      </FilterForm>
      {deliveries === null ? (
        <p class="muted">The deliveries could not be read.</p>
      ) : (
        <ListSection
          at={at}
          total={deliveries.total}
          noun={['delivery', 'deliveries']}
          order="newest first"
          head={['Event', 'Status', 'Attempts', 'Last attempt', 'Next retry', 'Created', <ActionHeading />]}
          rows={deliveries.items.map((d) => (
            <DeliveryRow frame={frame} webhookId={w.id} d={d} />
          ))}
          empty={
            at.filters.status
              ? 'No delivery matches this filter.'
              : 'No deliveries yet. Send a ping to try the endpoint.'
          }
        />
      )}
    </>
  );
}

/** Since when a subscription holds its events, and why. */
function DisabledNotice({ w }: { w: WebhookSubscription }) {
  if (w.active) return null;
  const since = w.disabledAt ? `, since ${w.disabledAt.slice(0, 16).replace('T', ' ')} UTC` : '';
  return (
    <p class="warning" role="status">
      {`Disabled (${w.disabledReason ?? 'manual'}${since})`}: events are recorded and held; making it active
      sends them, oldest first.
    </p>
  );
}

/** One subscription: edit it, rotate its secret, ping it, delete it, and its recent deliveries. */
export function webhookPage(opts: WebhookPageOptions) {
  const { frame, webhook: w, rotated } = opts;
  const values = opts.form ?? {
    url: w.url,
    events: w.events.join(', '),
    description: w.description,
    active: w.active,
  };
  return consolePage(
    `Webhook ${w.url}`,
    SECTION,
    frame,
    <>
      <p>
        <a href={SECTION}>← All subscriptions</a>
      </p>
      {rotated && (
        <SecretBox title="New signing secret" w={rotated}>
          {rotated.previousSecretExpiresAt && (
            <p>
              The previous secret keeps signing beside it until{' '}
              <time dateTime={rotated.previousSecretExpiresAt}>
                {`${rotated.previousSecretExpiresAt.replace('T', ' ').slice(0, 16)} UTC`}
              </time>
              : update the receiver before then.
            </p>
          )}
        </SecretBox>
      )}
      <Messages notice={opts.notice} error={opts.error} />
      <DisabledNotice w={w} />
      <p class="muted">
        <code>{w.id}</code> · created <DateCell iso={w.createdAt} inline />
      </p>
      <h2 id="edit-webhook">Edit</h2>
      <form method="post" action={`${SECTION}/edit`} aria-labelledby="edit-webhook">
        <Hidden frame={frame} id={w.id} />
        <SubscriptionFields prefix="edit" v={values} />
        <button type="submit">Save changes</button>
      </form>
      <h2 id="actions">Secret, test and removal</h2>
      <div class="actions">
        <form method="post" action={`${SECTION}/ping`}>
          <Hidden frame={frame} id={w.id} />
          <button type="submit" class="secondary">
            Send ping
          </button>
        </form>
        <form method="post" action={`${SECTION}/rotate-secret`}>
          <Hidden frame={frame} id={w.id} />
          <button type="submit" class="secondary">
            Rotate secret
          </button>
        </form>
        <a class="button danger" href={`${SECTION}/delete?id=${encodeURIComponent(w.id)}`}>
          Delete…
        </a>
      </div>
      <Deliveries frame={frame} w={w} opts={opts} />
    </>,
  );
}
