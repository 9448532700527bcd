import { esc } from '../oauth/page-layout.js';
import { countOf } from '../use-cases/views.js';

/**
 * What every list page of the console shares: its page of rows (20 by default, `?page=` and
 * `?limit=` in the address, so a page can be bookmarked and shared), a filter form that is a GET
 * of the same page, the pager, and the create form at the top (folded, so the list starts high).
 */

export const PAGE_SIZE = 20;
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
export function listHref(at: ListAddress, page = at.page): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(at.filters)) if (v) params.set(k, v);
  if (at.limit !== PAGE_SIZE) params.set('limit', String(at.limit));
  if (page > 1) params.set('page', String(page));
  const q = params.toString();
  return q ? `${at.path}?${q}` : at.path;
}

/** "API keys 21–40 of 91": what the page shows. */
export function rangeText(at: ListAddress, shown: number, total: number, noun: [string, string]): string {
  if (shown === 0) return `${countOf(total, ...noun)}`;
  const first = (at.page - 1) * at.limit + 1;
  return `${noun[1][0].toUpperCase()}${noun[1].slice(1)} ${first}–${first + shown - 1} of ${total}`;
}

/** Previous and next page links (`rel` prev/next), and which page this is. */
export function pager(at: ListAddress, total: number): string {
  const pages = Math.max(1, Math.ceil(total / at.limit));
  if (pages === 1 && at.page === 1) return '';
  const prev =
    at.page > 1
      ? `<a href="${esc(listHref(at, Math.min(at.page - 1, pages)))}" rel="prev">← Previous page</a>`
      : '';
  const next =
    at.page < pages ? `<a href="${esc(listHref(at, at.page + 1))}" rel="next">Next page →</a>` : '';
  return `<nav class="pager" aria-label="Pages">${prev}<span>Page ${at.page} of ${pages}</span>${next}</nav>`;
}

/** The rows of a list, or what an empty list says; the pager under them. */
export function listSection(opts: {
  at: ListAddress;
  total: number;
  noun: [string, string];
  /** The caption's end, after the range ("newest first"). */
  order?: string;
  head: string[];
  rows: string[];
  empty: string;
}): string {
  const { at, total, rows } = opts;
  const caption = `${rangeText(at, rows.length, total, opts.noun)}${opts.order ? `, ${opts.order}` : ''}`;
  const body = rows.length
    ? `<div class="table-wrap"><table><caption>${esc(caption)}</caption>
<thead><tr>${opts.head.map((h) => `<th scope="col">${h}</th>`).join('')}</tr></thead>
<tbody>${rows.join('')}</tbody></table></div>`
    : `<p class="muted" id="no-rows">${esc(at.page > 1 && total > 0 ? `Page ${at.page} is past the end of the list (${countOf(total, ...opts.noun)}).` : opts.empty)}</p>`;
  return `<section id="list" aria-label="${esc(opts.noun[1])}">${body}${pager(at, total)}</section>`;
}

/** A filter form: a GET of the list page with these controls; "Clear" goes back to the defaults. */
export function filterForm(at: ListAddress, controls: string, clearHref = at.path): string {
  return `<form method="get" action="${esc(at.path)}" class="filters" role="search" aria-label="Filter the list">
${controls}${at.limit !== PAGE_SIZE ? `<input type="hidden" name="limit" value="${at.limit}">` : ''}
<div class="filter-actions"><button type="submit" class="secondary">Filter</button><a href="${esc(clearHref)}">Clear</a></div></form>`;
}

/** One filter control: a labelled select. */
export function selectFilter(
  name: string,
  label: string,
  options: [string, string][],
  chosen: string,
): string {
  const items = options
    .map(
      ([value, text]) =>
        `<option value="${esc(value)}"${value === chosen ? ' selected' : ''}>${esc(text)}</option>`,
    )
    .join('');
  return `<div><label for="filter-${name}">${esc(label)}</label><select id="filter-${name}" name="${name}">${items}</select></div>`;
}

/** One filter control: a labelled text input. */
export function textFilter(
  name: string,
  label: string,
  value: string,
  type = 'text',
  placeholder = '',
): string {
  return `<div><label for="filter-${name}">${esc(label)}</label><input id="filter-${name}" name="${name}" type="${type}" value="${esc(value)}"${placeholder ? ` placeholder="${esc(placeholder)}"` : ''}></div>`;
}

/**
 * The create form of a list, at the top of the page: folded under its button so the list starts
 * high, open when it has something to say (a refusal to correct) or nothing is listed yet.
 */
export function createPanel(id: string, label: string, form: string, open: boolean): string {
  return `<details class="create"${open ? ' open' : ''}><summary class="button">${esc(label)}</summary>
<section aria-labelledby="${id}"><h2 id="${id}">${esc(label)}</h2>${form}</section></details>`;
}
