import { type Compare, type Filter, parse, Tester } from 'scim2-parse-filter';

type CompValue = Compare['compValue'];
import { ScimError } from './errors.js';
import { describeFilterProblem } from './filter-errors.js';

/**
 * SCIM filters (RFC 7644 §3.4.2.2) through scim2-parse-filter, the most used SCIM filter parser on
 * npm (the parser scim-patch, which applies our PATCH operations, is built on): every operator,
 * `and`/`or`/`not` and value paths parse; a malformed filter is 400 `invalidFilter`. The store
 * answers the equalities it can look up (`equalityOf`); the whole filter is then checked on the
 * candidates in memory (`matches`).
 */
export function parseFilter(text: string | undefined): Filter | null {
  if (text === undefined || text.trim() === '') return null;
  if (text.length > 1000) throw new ScimError(400, 'invalidFilter', 'filter is longer than 1000 characters');
  try {
    return parse(text);
  } catch {
    // The parser's own message is its internals ("[(EOT)] is not json"): say what is wrong instead.
    throw new ScimError(400, 'invalidFilter', `invalid filter: ${describeFilterProblem(text)}`);
  }
}

const leaf = (attrPath: string) => {
  const name = attrPath.slice(attrPath.lastIndexOf(':') + 1).toLowerCase();
  return name.endsWith('.value') && name !== 'emails.value' ? name.slice(0, -6) : name;
};

/**
 * An equality the store can look up that every match must satisfy: `attr eq "value"` itself, or
 * one inside a top-level `and`. `attrs` are the lower-cased attribute names looked up by the caller.
 */
export function equalityOf(
  filter: Filter | null,
  attrs: readonly string[],
): { attr: string; value: string } | null {
  if (!filter) return null;
  if (filter.op === 'eq' && typeof filter.compValue === 'string' && attrs.includes(leaf(filter.attrPath))) {
    return { attr: leaf(filter.attrPath), value: filter.compValue };
  }
  if (filter.op === 'and') {
    for (const f of filter.filters) {
      const found = equalityOf(f, attrs);
      if (found) return found;
    }
  }
  return null;
}

/** Attributes compared case-exactly (RFC 7643: `id`, `externalId` are caseExact); others fold case. */
const CASE_EXACT = new Set(['id', 'externalid']);

const fold = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);

/** scim2-parse-filter's evaluator compares strings exactly; SCIM's are caseExact only where declared. */
class ScimTester extends Tester {
  private exact = false;
  override test(r: unknown, f: Filter): boolean {
    if (!('attrPath' in f) || f.op === '[]') return super.test(r, f);
    const outer = this.exact;
    this.exact = CASE_EXACT.has(leaf(f.attrPath));
    try {
      return super.test(r, f);
    } finally {
      this.exact = outer;
    }
  }
  private args(r: unknown, v: CompValue): [unknown, CompValue] {
    return this.exact ? [r, v] : [fold(r), fold(v) as CompValue];
  }
  override eq(r: unknown, v: CompValue) {
    return super.eq(...this.args(r, v));
  }
  override ne(r: unknown, v: CompValue) {
    return super.ne(...this.args(r, v));
  }
  override sw(r: unknown, v: CompValue) {
    return super.sw(...this.args(r, v));
  }
  override ew(r: unknown, v: CompValue) {
    return super.ew(...this.args(r, v));
  }
  override co(r: unknown, v: CompValue) {
    return super.co(...this.args(r, v));
  }
}

const tester = new ScimTester();

export const matches = (resource: object, filter: Filter | null) => !filter || tester.test(resource, filter);
