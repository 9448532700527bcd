import { type Static, type TStringOptions, Type } from 'typebox';
import { DescribedPattern } from './schema.js';

const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;
/**
 * The highest page number accepted. Numbers such as `1e300` are integers to JSON Schema; without
 * a bound they reached the store as a skip it cannot represent (a 500). 1,000,000 pages of 100
 * is far past any list the API serves.
 */
const MAX_PAGE = 1_000_000;

/**
 * The most items a list's `total` counts (issue 31): past it the count stops, so no page costs a
 * read of every matching item (on the local store every one is read and decoded). A list with more
 * says `total: 1000` and `totalCapped: true`; its later pages are still there (`page`, or
 * `nextCursor`, which never counts).
 */
export const LIST_TOTAL_CAP = 1000;

/** What a repository counts for a page: one more than the cap, so the page knows it was reached. */
export const LIST_COUNT_LIMIT = LIST_TOTAL_CAP + 1;

/**
 * The lists read an hour or a day at a time (requests, events, a webhook's deliveries) count on
 * past a full page for at most this many more hours or days of the list (the rest of the page's
 * day, then whole days): past them `total` is what they counted and `totalCapped` says it is a
 * lower bound. So a page's count costs at most `LIST_COUNT_LIMIT` matches and a few lookups,
 * whatever the list holds (issue 31/37; docs/api-guide.md, "Totals"). Measured at 50,000 stored
 * (BENCHMARKS.md, "Lists at 50,000"): with 8 steps `requests?status=open&priority=high` took 3.2
 * times its p50 at 1,000, with 3 steps 1.6 times.
 */
export const LIST_COUNT_STEPS_PAST_PAGE = 3;

export const Pagination = Type.Object(
  {
    page: Type.Integer({ minimum: 1 }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_LIMIT }),
    total: Type.Integer({
      minimum: 0,
      maximum: LIST_TOTAL_CAP,
      description:
        `Items matching, counted up to ${LIST_TOTAL_CAP}: with more, ${LIST_TOTAL_CAP} and \`totalCapped: true\`. ` +
        'The lists read by hours and days (requests, events, deliveries) count at most ' +
        `${LIST_COUNT_STEPS_PAST_PAGE} hours or days of the list past a full page: a list that goes on past them ` +
        'answers what they counted and `totalCapped: true`.',
    }),
    pages: Type.Integer({ minimum: 0, description: 'Pages of `limit` items in `total`.' }),
    totalCapped: Type.Optional(
      Type.Literal(true, {
        description:
          `Present (true) when \`total\` is a lower bound: more than ${LIST_TOTAL_CAP} items match, or the count ` +
          'stopped at its bound before the list ended (past a full page, or a call that read its span of hours ' +
          'and days). `total` and `pages` are then lower bounds; the pages past them still answer (or follow `nextCursor`).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type Pagination = Static<typeof Pagination>;

export const EventPagination = Type.Object(
  { ...Pagination.properties, hasMore: Type.Boolean() },
  { additionalProperties: false },
);
export type EventPagination = Static<typeof EventPagination>;

/**
 * `page` and `limit` query parameters. Values below 1, non-numeric, or a page above `MAX_PAGE` are
 * refused by the schema (400); a `limit` above the maximum is accepted and clamped by `pageWindow`.
 */
export const PageQuery = {
  page: Type.Integer({
    minimum: 1,
    maximum: MAX_PAGE,
    default: 1,
    description: `Page number, from 1 (at most ${MAX_PAGE}).`,
  }),
  limit: Type.Integer({
    minimum: 1,
    default: DEFAULT_PAGE_LIMIT,
    description: `Items per page (default ${DEFAULT_PAGE_LIMIT}); values above ${MAX_PAGE_LIMIT} are clamped to ${MAX_PAGE_LIMIT}.`,
  }),
};

interface PageWindow {
  page: number;
  limit: number;
  skip: number;
}

export function pageWindow(page = 1, limit = DEFAULT_PAGE_LIMIT): PageWindow {
  const clamped = Math.min(Math.max(1, Math.trunc(limit)), MAX_PAGE_LIMIT);
  const p = Math.max(1, Math.trunc(page));
  return { page: p, limit: clamped, skip: (p - 1) * clamped };
}

/** The page object of a page mode answer from `counted`, a count of at most `LIST_COUNT_LIMIT`. */
export function paginate(window: PageWindow, counted: number): Pagination {
  const total = Math.min(counted, LIST_TOTAL_CAP);
  const pages = Math.ceil(total / window.limit);
  return {
    page: window.page,
    limit: window.limit,
    total,
    pages,
    ...(counted > LIST_TOTAL_CAP ? { totalCapped: true as const } : {}),
  };
}

export function paginateEvents(window: PageWindow, counted: number): EventPagination {
  return { ...paginate(window, counted), hasMore: window.skip + window.limit < counted };
}

// ---- Cursor pagination (issue 17): `cursor` in, `nextCursor` out, beside page/limit. ----

/** The longest cursor accepted: a cursor is a few sort key values, an id and a fingerprint. */
export const MAX_CURSOR_LENGTH = 1024;

/**
 * What every cursor is made of (base64url, as `encodeCursor` writes them): stated, so a cursor
 * travels in a query unescaped and the longest one stays 1 KiB on the wire.
 */
export const CURSOR_PATTERN = DescribedPattern(
  '^[A-Za-z0-9_-]+$',
  'is not a cursor this list issued (cursors are letters, digits, - and _): pass `nextCursor`/`prevCursor` unchanged',
);

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/**
 * The query parameters of a list that pages both ways: `page`/`limit` as the spec says, and
 * `cursor`. `page` has no schema default here (the default, 1, is applied by `pageWindow`) so a
 * list can tell `page` given from `page` absent: `page` together with `cursor` is a 400.
 */
export const CursorPageQuery = {
  page: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PAGE,
      description: `Page number, from 1 (default 1, at most ${MAX_PAGE}). Not together with \`cursor\`.`,
    }),
  ),
  limit: Type.Optional(PageQuery.limit),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_CURSOR_LENGTH,
      pattern: CURSOR_PATTERN,
      description:
        'Opaque position from a previous answer (`pagination.nextCursor` / `prevCursor`, or the `Link` ' +
        'header): the items after (or before) it in the same order. Pass the same filters and `sort` as ' +
        'the call that returned it (otherwise 400); `limit` may change. Not together with `page`. ' +
        'Stable under concurrent inserts: no item is skipped or repeated among those that existed when ' +
        'paging started.',
    }),
  ),
};

/**
 * `pagination` of a list answered in page mode (no `cursor`): the spec's page object plus
 * `nextCursor`, the position after the last item of this page (null on the last page), so a
 * client can continue with cursors from here.
 */
export const PagePagination = Type.Object(
  {
    ...Pagination.properties,
    nextCursor: NullableString('Continue after this page with `cursor=<nextCursor>`; null on the last page.'),
  },
  { additionalProperties: false },
);
export type PagePagination = Static<typeof PagePagination>;

/** `pagination` of a list answered in cursor mode (`cursor` given): no count is made. */
export const CursorPagination = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_LIMIT }),
    nextCursor: NullableString('The items after this page; null when there are none (yet).'),
    prevCursor: NullableString('The items before this page; null when this page starts the list.'),
    hasMore: Type.Boolean({ description: 'Whether `nextCursor` leads to more items.' }),
  },
  { additionalProperties: false },
);
export type CursorPagination = Static<typeof CursorPagination>;

/** A list's `pagination`: page mode (with `total`/`pages`) or cursor mode (without a count). */
export const ListPagination = Type.Union([PagePagination, CursorPagination], {
  description:
    'Page mode (no `cursor`): `page`, `limit`, `total`, `pages` and `nextCursor`. Cursor mode (`cursor` ' +
    'given): `limit`, `nextCursor`, `prevCursor`, `hasMore`, without a total.',
});
export type ListPagination = Static<typeof ListPagination>;

/**
 * `sort` query parameter of a list: each field ascending, or descending with a `-` prefix. An
 * unknown value is a 400 listing the allowed ones (the enum).
 */
export function SortQuery<const F extends readonly string[]>(fields: F, defaultSort: string, notes = '') {
  const values = fields.flatMap((f) => [f, `-${f}`]);
  return Type.Unsafe<string>({
    type: 'string',
    enum: values,
    description:
      `Order of the list: one of ${values.map((v) => `\`${v}\``).join(', ')} (\`-\` = descending; ` +
      `default \`${defaultSort}\`). Ties are broken by id in the same direction.${notes ? ` ${notes}` : ''}`,
  });
}

const escapeRegex = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The longest comma-separated filter value accepted (each value is also checked). */
const MAX_ENUM_LIST_LENGTH = 200;

/**
 * A filter that takes one value or several separated by commas (`status=open,pending`, spaces
 * around each allowed): any of them matches. The schema states the allowed values (its pattern,
 * `commaListPattern`), so the validator refuses an unknown one with the list of allowed ones and a
 * client or a generator knows them; the description lists them too.
 */
export const EnumListQuery = (values: readonly string[], what: string) =>
  Type.String({
    minLength: 1,
    maxLength: MAX_ENUM_LIST_LENGTH,
    pattern: commaListPattern(
      values.map(escapeRegex).join('|'),
      `must be one or more of ${values.join(', ')}, separated by commas`,
    ),
    description: `${what}: one value, or several separated by commas (any of them matches). Values: ${values
      .map((v) => `\`${v}\``)
      .join(', ')}.`,
  });

/**
 * The pattern of a comma list whose every item matches `item` (a regular expression), spaces
 * around each allowed (the lists trim them), refused with `message`.
 */
export function commaListPattern(item: string, message: string): string {
  return DescribedPattern(`^ *(?:${item}) *(?:, *(?:${item}) *)*$`, message);
}

/**
 * The search parameter of a list, one name across lists: `q` (as GitHub's and Stripe's search
 * APIs call it), and `search`, its alias (the spec's name on the users list), both with the
 * list's own bounds (`text`). Sending both with different values is a 400 (`searchText` in the
 * platform); the same value twice is fine.
 */
export function SearchQuery(text: TStringOptions & { description: string }) {
  return {
    q: Type.Optional(Type.String(text)),
    search: Type.Optional(
      Type.String({
        ...text,
        description:
          'Alias of `q` (the same search, under the name the users list had first). Sending both with ' +
          'different values → 400 naming `query.search`.',
      }),
    ),
  };
}
