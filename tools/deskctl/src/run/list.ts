import { countOf, type Deps, type EventContext } from '@support-desk/identity/admin';
import { positiveInt, UsageError } from '../args.js';
import type { CliNats, CommandResult, CommandSpec, ListPaging, Run } from '../command.js';

/**
 * What every deskctl list runs: a page (`--limit`, `--page`) or every page (`--all`), and the
 * footer when the page is not the whole list ("Showing 1–20 of 56 — next: --page 2, or --all"),
 * on standard error so a pipe gets the rows alone. Every source counts what matches, so the footer
 * always says how many there are.
 */

export interface PageRequest {
  limit: number;
  /** 1-based. */
  page: number;
}

export interface ListPage<T> {
  items: T[];
  /** How many match in all. */
  total: number;
}

/** A page of a list its source answers whole (a handful of connections, the OAuth clients…). */
export function pageOf<T>(all: T[], request: PageRequest): ListPage<T> {
  const start = (request.page - 1) * request.limit;
  return { items: all.slice(start, start + request.limit), total: all.length };
}

type Fetch<T> = (
  deps: Deps,
  ctx: EventContext,
  values: Record<string, unknown>,
  positionals: string[],
  nats: CliNats | null,
  request: PageRequest,
) => Promise<ListPage<T>>;

export interface ListRows<T> {
  /** The JSON key of the rows (`users`). */
  key: string;
  columns: string[];
  row(item: T): string[];
  fetch: Fetch<T>;
}

/** `--all` reads at most this many pages (of the largest size): a bound, not a limit anyone meets. */
const MAX_PAGES = 1000;

const hasNext = (request: PageRequest, page: ListPage<unknown>) =>
  page.items.length > 0 && request.page * request.limit < page.total;

async function everyPage<T>(paging: ListPaging, ask: (r: PageRequest) => Promise<ListPage<T>>) {
  const items: T[] = [];
  for (let n = 1; n <= MAX_PAGES; n++) {
    const request = { limit: paging.maxLimit, page: n };
    const page = await ask(request);
    items.push(...page.items);
    if (!hasNext(request, page)) return items;
  }
  throw new Error(`the list has more than ${MAX_PAGES} pages of ${paging.maxLimit}: narrow it with filters`);
}

/** What the footer says about this page, or null when it is the whole list. */
function footer<T>(paging: ListPaging, request: PageRequest, page: ListPage<T>): string | null {
  const next = hasNext(request, page);
  if (request.page === 1 && !next) return null;
  if (page.items.length === 0)
    return `${countOf(page.total, ...paging.noun)} in all: page ${request.page} is past the end`;
  const first = (request.page - 1) * request.limit + 1;
  const shown = `Showing ${first}–${first + page.items.length - 1} of ${page.total}`;
  return next
    ? `${shown} — next: --page ${request.page + 1}, or --all for every one`
    : `${shown} (the last page)`;
}

/** The run of a list command of the table (`spec`, made by listCommand), with its rows. */
export function listRun<T>(spec: CommandSpec, rows: ListRows<T>): Run {
  const paging = spec.list;
  if (!paging) throw new Error('listRun needs a list command (listCommand)');
  return async (deps, ctx, values, positionals, nats) => {
    const limit = positiveInt(values.limit, 'limit') ?? paging.defaultLimit;
    if (limit > paging.maxLimit) throw new UsageError(`--limit must be at most ${paging.maxLimit}`);
    const ask = (request: PageRequest) => rows.fetch(deps, ctx, values, positionals, nats, request);
    const table = (items: T[]) => ({ columns: rows.columns, rows: items.map((i) => rows.row(i)) });
    const none = `no ${paging.noun[1]}`;
    if (values.all === true) {
      if (values.page !== undefined) throw new UsageError('--all reads every page: leave out --page');
      const items = await everyPage(paging, ask);
      return {
        json: { [rows.key]: items, pagination: { total: items.length } },
        text: none,
        table: table(items),
      };
    }
    const request: PageRequest = { limit, page: positiveInt(values.page, 'page') ?? 1 };
    const page = await ask(request);
    const result: CommandResult = {
      json: {
        [rows.key]: page.items,
        pagination: { page: request.page, limit, total: page.total, pages: Math.ceil(page.total / limit) },
      },
      text: request.page > 1 ? `no ${paging.noun[1]} on page ${request.page}` : none,
      table: table(page.items),
    };
    const note = footer(paging, request, page);
    return note ? { ...result, note } : result;
  };
}
