import { createHash } from 'node:crypto';
import { MAX_CURSOR_LENGTH } from '@support-desk/contracts';
import { AppError } from './errors.js';

/**
 * Opaque list cursors (issue 17): base64url of a small versioned JSON naming the position of one
 * item in one ordering of one filtered list: the item's sort key values and id, the direction to
 * read from it, the sort spec and a fingerprint of the filters.
 *
 * Not signed, on purpose: a cursor only says where to resume; the list re-applies the caller's
 * filters and visibility on every call, so a forged cursor can show nothing a client could not
 * ask for with `createdBefore` or `sort` (what GitHub's and Stripe's cursors give, too). The
 * decoder checks the shape strictly and refuses a cursor issued for other filters or another
 * sort, each as a 400 on `query.cursor`. Versioned (`v`) so the format can change later: an old
 * cursor is then refused with the same 400, and the client starts again.
 */

/** How a sort key value travels in a cursor: dates as ISO strings. */
export type CursorKeyKind = 'date' | 'string' | 'number';
export type CursorKeyValue = Date | string | number;

/** Where a page starts: after (`next`) or before (`prev`) the item with these keys and id. */
export interface CursorPosition {
  /** The item's sort key values, in the sort's order, without the id (never null). */
  keys: CursorKeyValue[];
  /** The item's id; '' stands before every id (a feed's start). */
  id: string;
  direction: 'next' | 'prev';
}

/** What a cursor is valid for: one sort of one filtered list. */
export interface CursorScope {
  /** The sort spec (`-createdAt`), as the client gave it or the list's default. */
  sort: string;
  /** The kinds of the position's `keys`, in order. */
  kinds: readonly CursorKeyKind[];
  /** Every filter that selects the list's items (undefined ones are ignored). */
  filters: Record<string, unknown>;
}

const VERSION = 1;
const MAX_ID_LENGTH = 100;
const MAX_STRING_KEY_LENGTH = 500;

interface CursorPayload {
  v: number;
  s: string;
  f: string;
  d: 'n' | 'p';
  k: (string | number)[];
  i: string;
}

/** JSON with sorted keys and no undefined members, so equal filters give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** A short digest of the filters a cursor was issued for (not a secret, only a check). */
export function filterFingerprint(filters: Record<string, unknown>): string {
  return createHash('sha256').update(canonical(filters)).digest('base64url').slice(0, 16);
}

export function encodeCursor(scope: CursorScope, position: CursorPosition): string {
  const payload: CursorPayload = {
    v: VERSION,
    s: scope.sort,
    f: filterFingerprint(scope.filters),
    d: position.direction === 'next' ? 'n' : 'p',
    k: position.keys.map((k) => (k instanceof Date ? k.toISOString() : k)),
    i: position.id,
  };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

const invalidCursor = (message: string) =>
  new AppError('VALIDATION_ERROR', `query.cursor ${message}`, {}, [{ field: 'query.cursor', message }]);

const MALFORMED =
  'is not a cursor this list issued: pass `nextCursor`/`prevCursor` unchanged, or omit `cursor` to start again';

function parsePayload(raw: string): CursorPayload {
  if (raw.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalidCursor(MALFORMED);
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor(MALFORMED);
  }
  const p = payload as Partial<CursorPayload> | null;
  const wellFormed =
    p !== null &&
    typeof p === 'object' &&
    !Array.isArray(p) &&
    Object.keys(p).length === 6 &&
    p.v === VERSION &&
    typeof p.s === 'string' &&
    typeof p.f === 'string' &&
    (p.d === 'n' || p.d === 'p') &&
    Array.isArray(p.k) &&
    typeof p.i === 'string' &&
    p.i.length <= MAX_ID_LENGTH;
  if (!wellFormed) throw invalidCursor(MALFORMED);
  return p as CursorPayload;
}

function decodeKey(value: unknown, kind: CursorKeyKind): CursorKeyValue | undefined {
  if (kind === 'number') return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.length > MAX_STRING_KEY_LENGTH) return undefined;
  if (kind === 'string') return value;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) || date.toISOString() !== value ? undefined : date;
}

/**
 * The position a cursor names, checked strictly against the list it is used with; anything else
 * (not base64url JSON, a missing or extra member, a key of the wrong kind, another sort or other
 * filters) is a 400 VALIDATION_ERROR with a detail on `query.cursor`.
 */
export function decodeCursor(raw: string, scope: CursorScope): CursorPosition {
  const p = parsePayload(raw);
  if (p.s !== scope.sort)
    throw invalidCursor(
      `was issued for sort=${p.s.slice(0, 40)}, not sort=${scope.sort}: pass the same sort, or omit cursor`,
    );
  if (p.f !== filterFingerprint(scope.filters))
    throw invalidCursor(
      'was issued for other filters: pass the same filters as the call that returned it, or omit cursor',
    );
  if (p.k.length !== scope.kinds.length) throw invalidCursor(MALFORMED);
  const keys = p.k.map((k, n) => decodeKey(k, scope.kinds[n]!));
  if (keys.some((k) => k === undefined)) throw invalidCursor(MALFORMED);
  return { keys: keys as CursorKeyValue[], id: p.i, direction: p.d === 'n' ? 'next' : 'prev' };
}

/** One link of an RFC 8288 `Link` header: the query parameters to change (undefined removes). */
export interface PageLink {
  rel: 'next' | 'prev' | 'first' | 'last';
  set: Record<string, string | number | undefined>;
}

/**
 * An RFC 8288 `Link` header value of relative URIs built from the call's own URL
 * (`request.url`): the caller's other query parameters are kept as sent, the ones in `set` are
 * replaced (or removed), e.g. `</v1/requests?status=open&cursor=eyJ2…&limit=20>; rel="next"`.
 * Undefined when there is no link.
 */
export function linkHeader(url: string, links: PageLink[]): string | undefined {
  const [path, search = ''] = url.split('?', 2) as [string, string?];
  const parts = links.map(({ rel, set }) => {
    const params = new URLSearchParams(search);
    for (const [name, value] of Object.entries(set)) {
      if (value === undefined) params.delete(name);
      else params.set(name, String(value));
    }
    const query = params.toString();
    return `<${path}${query ? `?${query}` : ''}>; rel="${rel}"`;
  });
  return parts.length > 0 ? parts.join(', ') : undefined;
}
