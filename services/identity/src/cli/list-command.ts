import type { Deps, EventContext } from '../use-cases/deps.js';
import { countOf } from '../use-cases/views.js';
import { positiveInt, UsageError } from './args.js';
import type { ArgSpec, CliNats, Command, CommandResult, Options } from './command.js';

/**
 * Every deskctl list is one of these: the same flags (`--limit`, `--page`, `--all`) and the same
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

export interface ListSpec<T> {
  description: string;
  options?: Options;
  args?: ArgSpec[];
  examples: string[];
  /** The JSON key of the rows (`users`), and how one and several are called in the footer. */
  key: string;
  noun: [one: string, several: string];
  /** Rows a page (default 20) and at most (default 100). */
  defaultLimit?: number;
  maxLimit?: number;
  columns: string[];
  row(item: T): string[];
  fetch: Fetch<T>;
}

/** `--all` reads at most this many pages (of the largest size): a bound, not a limit anyone meets. */
const MAX_PAGES = 1000;

const hasNext = (request: PageRequest, page: ListPage<unknown>) =>
  page.items.length > 0 && request.page * request.limit < page.total;

async function everyPage<T>(
  spec: Required<Pick<ListSpec<T>, 'maxLimit'>>,
  ask: (r: PageRequest) => Promise<ListPage<T>>,
) {
  const items: T[] = [];
  for (let n = 1; n <= MAX_PAGES; n++) {
    const request = { limit: spec.maxLimit, page: n };
    const page = await ask(request);
    items.push(...page.items);
    if (!hasNext(request, page)) return items;
  }
  throw new Error(`the list has more than ${MAX_PAGES} pages of ${spec.maxLimit}: narrow it with filters`);
}

/** What the footer says about this page, or null when it is the whole list. */
function footer<T>(spec: ListSpec<T>, request: PageRequest, page: ListPage<T>): string | null {
  const next = hasNext(request, page);
  if (request.page === 1 && !next) return null;
  if (page.items.length === 0)
    return `${countOf(page.total, ...spec.noun)} in all: page ${request.page} is past the end`;
  const first = (request.page - 1) * request.limit + 1;
  const shown = `Showing ${first}–${first + page.items.length - 1} of ${page.total}`;
  return next
    ? `${shown} — next: --page ${request.page + 1}, or --all for every one`
    : `${shown} (the last page)`;
}

export function listCommand<T>(given: ListSpec<T>): Command {
  const spec = { defaultLimit: 20, maxLimit: 100, ...given };
  const pagingOptions: Options = {
    limit: {
      type: 'string',
      value: 'N',
      description: `${spec.noun[1]} per page (1-${spec.maxLimit}, default ${spec.defaultLimit})`,
    },
    page: { type: 'string', value: 'N', description: 'page number (default 1)' },
    all: { type: 'boolean', description: `every ${spec.noun[0]}, all pages` },
  };
  return {
    description: spec.description,
    options: { ...spec.options, ...pagingOptions },
    ...(spec.args ? { args: spec.args } : {}),
    examples: spec.examples,
    async run(deps, ctx, values, positionals, nats) {
      const limit = positiveInt(values.limit, 'limit') ?? spec.defaultLimit;
      if (limit > spec.maxLimit) throw new UsageError(`--limit must be at most ${spec.maxLimit}`);
      const ask = (request: PageRequest) => spec.fetch(deps, ctx, values, positionals, nats, request);
      const table = (items: T[]) => ({ columns: spec.columns, rows: items.map((i) => spec.row(i)) });
      const none = `no ${spec.noun[1]}`;
      if (values.all === true) {
        if (values.page !== undefined) throw new UsageError('--all reads every page: leave out --page');
        const items = await everyPage(spec, ask);
        return {
          json: { [spec.key]: items, pagination: { total: items.length } },
          text: none,
          table: table(items),
        };
      }
      const request: PageRequest = { limit, page: positiveInt(values.page, 'page') ?? 1 };
      const page = await ask(request);
      const result: CommandResult = {
        json: {
          [spec.key]: page.items,
          pagination: { page: request.page, limit, total: page.total, pages: Math.ceil(page.total / limit) },
        },
        text: request.page > 1 ? `no ${spec.noun[1]} on page ${request.page}` : none,
        table: table(page.items),
      };
      const note = footer(spec, request, page);
      return note ? { ...result, note } : result;
    },
  };
}
