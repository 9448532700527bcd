import type { ComponentChildren } from 'preact';
import { countOf } from '../../use-cases/views.js';

/**
 * What every list page of the console shares: its page of rows (20 by default, `?page=` and
 * `?limit=` in the address, so a page can be bookmarked and shared), a filter form that is a GET
 * of the same page, the pager, and the create form at the top (folded, so the list starts high).
 */

const PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

/** A list page's address: its path, and the filters applied (empty ones left out). */
export interface ListAddress {
  path: string;
  filters: Record<string, string | undefined>;
  page: number;
  limit: number;
}

const positive = (raw: unknown, fallback: number, max: number) => {
  const n = typeof raw === 'string' && /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  return Number.isInteger(n) && n >= 1 ? Math.min(n, max) : fallback;
};

/** `page` and `limit` of a list's query: anything that is not a positive number is the default. */
export function pageQuery(query: unknown): { page: number; limit: number } {
  const q = (query ?? {}) as Record<string, unknown>;
  return { page: positive(q.page, 1, 100_000), limit: positive(q.limit, PAGE_SIZE, MAX_PAGE_SIZE) };
}

/** The address of another page of the same list, its filters kept. */
function listHref(at: ListAddress, page = at.page): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(at.filters)) if (v) params.set(k, v);
  if (at.limit !== PAGE_SIZE) params.set('limit', String(at.limit));
  if (page > 1) params.set('page', String(page));
  const q = params.toString();
  return q ? `${at.path}?${q}` : at.path;
}

/** "API keys 21–40 of 91": what the page shows. */
function rangeText(at: ListAddress, shown: number, total: number, noun: [string, string]): string {
  if (shown === 0) return `${countOf(total, ...noun)}`;
  const first = (at.page - 1) * at.limit + 1;
  return `${noun[1][0].toUpperCase()}${noun[1].slice(1)} ${first}–${first + shown - 1} of ${total}`;
}

/** Previous and next page links (`rel` prev/next), and which page this is. */
function Pager({ at, total }: { at: ListAddress; total: number }) {
  const pages = Math.max(1, Math.ceil(total / at.limit));
  if (pages === 1 && at.page === 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {at.page > 1 && (
        <a href={listHref(at, Math.min(at.page - 1, pages))} rel="prev">
          ← Previous page
        </a>
      )}
      <span>{`Page ${at.page} of ${pages}`}</span>
      {at.page < pages && (
        <a href={listHref(at, at.page + 1)} rel="next">
          Next page →
        </a>
      )}
    </nav>
  );
}

/** The "Action" column's heading: muted, as the column holds links and buttons. */
export const ActionHeading = () => <span class="muted">Action</span>;

/** A row's heading cell: what the item is called, and under it what tells it apart (its id). */
export function RowHeading(props: { name: ComponentChildren; wrap?: boolean; children: ComponentChildren }) {
  return (
    <th scope="row" class={props.wrap === false ? undefined : 'wrap'}>
      {props.name}
      <br />
      {props.children}
    </th>
  );
}

/** A table of rows with its caption and column headings. */
export function Table(props: { caption: string; head: ComponentChildren[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** The rows of a list, or what an empty list says; the pager under them. */
export function ListSection(opts: {
  at: ListAddress;
  total: number;
  noun: [string, string];
  /** The caption's end, after the range ("newest first"). */
  order?: string;
  head: ComponentChildren[];
  rows: ComponentChildren[];
  empty: string;
}) {
  const { at, total, rows } = opts;
  const caption = `${rangeText(at, rows.length, total, opts.noun)}${opts.order ? `, ${opts.order}` : ''}`;
  const empty =
    at.page > 1 && total > 0
      ? `Page ${at.page} is past the end of the list (${countOf(total, ...opts.noun)}).`
      : opts.empty;
  return (
    <section id="list" aria-label={opts.noun[1]}>
      {rows.length ? (
        <Table caption={caption} head={opts.head}>
          {rows}
        </Table>
      ) : (
        <p class="muted" id="no-rows">
          {empty}
        </p>
      )}
      <Pager at={at} total={total} />
    </section>
  );
}

/** A filter form: a GET of the list page with these controls; "Clear" goes back to the defaults. */
export function FilterForm(props: { at: ListAddress; clearHref?: string; children: ComponentChildren }) {
  const { at } = props;
  return (
    <form method="get" action={at.path} class="filters" role="search" aria-label="Filter the list">
      {props.children}
      {at.limit !== PAGE_SIZE && <input type="hidden" name="limit" value={at.limit} />}
      <div class="filter-actions">
        <button type="submit" class="secondary">
          Filter
        </button>
        <a href={props.clearHref ?? at.path}>Clear</a>
      </div>
    </form>
  );
}

/** One filter control: a labelled select. */
export function SelectFilter(props: {
  name: string;
  label: string;
  options: [string, string][];
  chosen: string;
}) {
  return (
    <div>
      <label for={`filter-${props.name}`}>{props.label}</label>
      <select id={`filter-${props.name}`} name={props.name}>
        {props.options.map(([value, text]) => (
          <option value={value} selected={value === props.chosen}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** One filter control: a labelled text input. */
export function TextFilter(props: {
  name: string;
  label: string;
  value: string;
  type?: 'text' | 'email';
  placeholder?: string;
}) {
  return (
    <div>
      <label for={`filter-${props.name}`}>{props.label}</label>
      <input
        id={`filter-${props.name}`}
        name={props.name}
        // Preact's types tell input types apart by role; an email and a text box take the same attributes.
        type={(props.type ?? 'text') as 'text'}
        value={props.value}
        placeholder={props.placeholder || undefined}
      />
    </div>
  );
}

/**
 * The create form of a list, at the top of the page: folded under its button so the list starts
 * high, open when it has something to say (a refusal to correct) or nothing is listed yet.
 */
export function CreatePanel(props: {
  id: string;
  label: string;
  open: boolean;
  children: ComponentChildren;
}) {
  return (
    <details class="create" open={props.open}>
      <summary class="button">{props.label}</summary>
      <section aria-labelledby={props.id}>
        <h2 id={props.id}>{props.label}</h2>
        {props.children}
      </section>
    </details>
  );
}
