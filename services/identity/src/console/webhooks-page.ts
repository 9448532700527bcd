import type { WebhookDelivery, WebhookSubscription, WebhookWithSecret } from '@support-desk/contracts';
import { alertBox, esc } from '../oauth/page-layout.js';
import { consolePage, csrfField, dateCell, type Frame, shownOnce, tags } from './frame.js';
import { createPanel, filterForm, type ListAddress, listSection, selectFilter } from './lists.js';

/** What a subscription form was sent with, to show again after a refusal. */
export interface WebhookFormValues {
  url?: string;
  events?: string;
  description?: string;
  active?: boolean;
}

/** Messages above a page: one result, one refusal. */
interface Messages {
  notice?: string;
  error?: string;
}

const SECTION = '/settings/webhooks';
const editHref = (id: string) => `${SECTION}/edit?id=${encodeURIComponent(id)}`;

const statusCell = (w: WebhookSubscription) =>
  w.active
    ? '<span class="tag">active</span>'
    : `<span class="tag revoked">disabled</span><br><span class="muted">${esc(w.disabledReason ?? 'manual')}</span>`;

/** A secret just made (create, rotation): shown this once, with the copy button. */
function secretBox(title: string, w: WebhookWithSecret, extra = ''): string {
  return `<section class="success" role="status" aria-labelledby="secret-title"><h2 id="secret-title">${esc(title)}</h2>
${shownOnce('new-secret', 'Signing secret', w.secret)}${extra}</section>`;
}

function subscriptionFields(prefix: string, v: WebhookFormValues): string {
  return `<label for="${prefix}-url">URL</label><input id="${prefix}-url" name="url" type="url" required maxlength="2048" placeholder="https://hooks.example.com/desk" value="${esc(v.url ?? '')}" aria-describedby="${prefix}-url-hint">
<p class="hint" id="${prefix}-url-hint">Deliveries are POSTed here, signed (Standard Webhooks). An https URL without a fragment; private, loopback and metadata addresses are refused unless the operator allows them.</p>
<label for="${prefix}-events">Events</label><input id="${prefix}-events" name="events" type="text" required maxlength="2000" placeholder="request.*, user.created" value="${esc(v.events ?? '')}" aria-describedby="${prefix}-events-hint">
<p class="hint" id="${prefix}-events-hint">Comma-separated: an event type (<code>request.created</code>), a family (<code>request.*</code>) or <code>*</code> for every event.</p>
<label for="${prefix}-description">Description</label><input id="${prefix}-description" name="description" type="text" maxlength="500" value="${esc(v.description ?? '')}">
<label><input type="checkbox" name="active" value="on"${v.active === false ? '' : ' checked'}> <span>Active — deliver events (while inactive they are recorded and held)</span></label>`;
}

export interface WebhooksPageOptions extends Messages {
  frame: Frame;
  /** null: the webhooks service is not answering (the page says so; the rest still works). */
  webhooks: WebhookSubscription[] | null;
  total: number;
  at: ListAddress;
  created?: WebhookWithSecret;
  form?: WebhookFormValues;
}

function subscriptionRow(w: WebhookSubscription): string {
  return `<tr data-webhook-id="${esc(w.id)}"><th scope="row" class="wrap"><code>${esc(w.url)}</code><br><span class="muted">${esc(w.id)}</span></th>
<td>${tags(w.events)}</td><td>${statusCell(w)}</td><td class="wrap">${esc(w.description) || '<span class="muted">—</span>'}</td>
<td>${dateCell(w.createdAt)}</td><td><a href="${editHref(w.id)}" aria-label="Manage ${esc(w.url)}">Manage</a></td></tr>`;
}

/** The create form at the top, then the subscriptions, a page at a time. */
export function webhooksPage(opts: WebhooksPageOptions): string {
  const { frame, webhooks } = opts;
  const created = opts.created ? secretBox(`Webhook for ${opts.created.url} created`, opts.created) : '';
  const body =
    webhooks === null
      ? ''
      : `${createPanel(
          'create-webhook',
          'Create a subscription',
          `<form method="post" action="${SECTION}">${csrfField(frame.csrf)}
${subscriptionFields('create', opts.form ?? {})}
<button type="submit">Create subscription</button></form>`,
          opts.form !== undefined,
        )}
${listSection({
  at: opts.at,
  total: opts.total,
  noun: ['subscription', 'subscriptions'],
  order: 'newest first',
  head: ['URL', 'Events', 'Status', 'Description', 'Created', '<span class="muted">Action</span>'],
  rows: webhooks.map(subscriptionRow),
  empty: 'No webhook subscriptions yet.',
})}`;
  return consolePage(
    'Webhooks',
    SECTION,
    frame,
    `${created}${alertBox(opts.notice, 'success')}${alertBox(opts.error)}
<p class="muted">Subscriptions receive the events they ask for as signed HTTP POSTs. The signing secret is shown once, when it is made.</p>
${body}`,
  );
}

export interface WebhookPageOptions extends Messages {
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

function lastAttempt(d: WebhookDelivery): string {
  const a = d.attempts.at(-1);
  if (!a) return '<span class="muted">none yet</span>';
  return a.status !== null ? `HTTP ${a.status}` : `<span class="wrap">${esc(a.error ?? 'error')}</span>`;
}

function deliveryRow(frame: Frame, webhookId: string, d: WebhookDelivery): string {
  const replay =
    d.status === 'pending'
      ? '<span class="muted">queued</span>'
      : `<form method="post" action="${SECTION}/replay">${csrfField(frame.csrf)}
<input type="hidden" name="id" value="${esc(webhookId)}"><input type="hidden" name="delivery" value="${esc(d.id)}">
<button type="submit" class="secondary" aria-label="Replay ${esc(d.id)}">Replay</button></form>`;
  return `<tr data-delivery-id="${esc(d.id)}"><th scope="row"><code>${esc(d.eventType)}</code><br><span class="muted">${esc(d.id)}</span></th>
<td><span class="tag${d.status === 'failed' ? ' revoked' : ''}">${esc(d.status)}</span></td><td>${d.attempts.length}</td>
<td>${lastAttempt(d)}</td><td>${dateCell(d.nextAttemptAt)}</td><td>${dateCell(d.createdAt)}</td><td>${replay}</td></tr>`;
}

function deliveriesSection(frame: Frame, w: WebhookSubscription, opts: WebhookPageOptions) {
  const { at, deliveries } = opts;
  const filters = filterForm(
    at,
    `<input type="hidden" name="id" value="${esc(w.id)}">${selectFilter(
      'status',
      'Status',
      [
        ['', 'Any'],
        ['pending', 'Pending'],
        ['succeeded', 'Succeeded'],
        ['failed', 'Failed'],
      ],
      at.filters.status ?? '',
    )}`,
    editHref(w.id),
  );
  const body =
    deliveries === null
      ? '<p class="muted">The deliveries could not be read.</p>'
      : listSection({
          at,
          total: deliveries.total,
          noun: ['delivery', 'deliveries'],
          order: 'newest first',
          head: [
            'Event',
            'Status',
            'Attempts',
            'Last attempt',
            'Next retry',
            'Created',
            '<span class="muted">Action</span>',
          ],
          rows: deliveries.items.map((d) => deliveryRow(frame, w.id, d)),
          empty: at.filters.status
            ? 'No delivery matches this filter.'
            : 'No deliveries yet. Send a ping to try the endpoint.',
        });
  return `<h2 id="deliveries">Deliveries</h2>${filters}${body}`;
}

const hidden = (frame: Frame, id: string) =>
  `${csrfField(frame.csrf)}<input type="hidden" name="id" value="${esc(id)}">`;

/** One subscription: edit it, rotate its secret, ping it, delete it, and its recent deliveries. */
export function webhookPage(opts: WebhookPageOptions): string {
  const { frame, webhook: w } = opts;
  const rotated = opts.rotated
    ? secretBox(
        'New signing secret',
        opts.rotated,
        opts.rotated.previousSecretExpiresAt
          ? `<p>The previous secret keeps signing beside it until <time datetime="${esc(opts.rotated.previousSecretExpiresAt)}">${esc(opts.rotated.previousSecretExpiresAt.replace('T', ' ').slice(0, 16))} UTC</time>: update the receiver before then.</p>`
          : '',
      )
    : '';
  const values = opts.form ?? {
    url: w.url,
    events: w.events.join(', '),
    description: w.description,
    active: w.active,
  };
  const disabled = w.active
    ? ''
    : `<p class="warning" role="status">Disabled (${esc(w.disabledReason ?? 'manual')}${w.disabledAt ? `, since ${esc(w.disabledAt.slice(0, 16).replace('T', ' '))} UTC` : ''}): events are recorded and held; making it active sends them, oldest first.</p>`;
  return consolePage(
    `Webhook ${w.url}`,
    SECTION,
    frame,
    `<p><a href="${SECTION}">← All subscriptions</a></p>
${rotated}${alertBox(opts.notice, 'success')}${alertBox(opts.error)}${disabled}
<p class="muted"><code>${esc(w.id)}</code> · created ${dateCell(w.createdAt).replace('<br>', ' ')}</p>
<h2 id="edit-webhook">Edit</h2>
<form method="post" action="${SECTION}/edit" aria-labelledby="edit-webhook">${hidden(frame, w.id)}
${subscriptionFields('edit', values)}
<button type="submit">Save changes</button></form>
<h2 id="actions">Secret, test and removal</h2>
<div class="actions">
<form method="post" action="${SECTION}/ping">${hidden(frame, w.id)}<button type="submit" class="secondary">Send ping</button></form>
<form method="post" action="${SECTION}/rotate-secret">${hidden(frame, w.id)}<button type="submit" class="secondary">Rotate secret</button></form>
<a class="button danger" href="${SECTION}/delete?id=${encodeURIComponent(w.id)}">Delete…</a>
</div>
${deliveriesSection(frame, w, opts)}`,
  );
}
