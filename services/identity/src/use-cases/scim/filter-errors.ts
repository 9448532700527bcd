/**
 * What is wrong with a SCIM filter (RFC 7644 §3.4.2.2), said for a person: the parser
 * (scim2-parse-filter) only reports its own internals ("[(EOT)] is not json"), so when it refuses
 * a filter this reads it again with positions and names the first problem and where it is
 * (1-based character positions). Only the message comes from here: what is accepted stays the
 * parser's decision.
 */

interface Token {
  kind: 'word' | 'string' | 'number' | 'punct' | 'end';
  text: string;
  /** 1-based position of its first character. */
  at: number;
}

class FilterProblem extends Error {}

const COMPARE = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);
const OPERATORS = 'eq, ne, co, sw, ew, gt, ge, lt, le or pr';
const LITERALS = new Set(['true', 'false', 'null']);

function tokens(filter: string): Token[] {
  const list: Token[] = [];
  let i = 0;
  while (i < filter.length) {
    const c = filter[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const at = i + 1;
    if ('()[]'.includes(c)) {
      list.push({ kind: 'punct', text: c, at });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < filter.length && filter[j] !== '"') j += filter[j] === '\\' ? 2 : 1;
      if (j >= filter.length)
        throw new FilterProblem(`the string starting at position ${at} has no closing quote (")`);
      list.push({ kind: 'string', text: filter.slice(i, j + 1), at });
      i = j + 1;
    } else {
      const word = /^(-?\d+(\.\d+)?([eE][-+]?\d+)?(?![\w.])|[A-Za-z_$][\w.$:/%-]*)/.exec(filter.slice(i));
      if (!word) throw new FilterProblem(`unexpected character "${c}" at position ${at}`);
      list.push({ kind: /^-?\d/.test(word[0]) ? 'number' : 'word', text: word[0], at });
      i += word[0].length;
    }
  }
  list.push({ kind: 'end', text: '', at: filter.length + 1 });
  return list;
}

/** A recursive-descent reading of the grammar that throws a FilterProblem at the first error. */
class Reader {
  private i = 0;
  constructor(private readonly list: Token[]) {}

  private get next() {
    return this.list[this.i];
  }
  private take() {
    return this.list[this.i++];
  }
  private is(text: string) {
    return this.next.kind !== 'string' && this.next.text.toLowerCase() === text;
  }
  private where(t: Token) {
    return t.kind === 'end' ? `at position ${t.at} (the end of the filter)` : `at position ${t.at}`;
  }

  whole() {
    this.or(null);
    if (this.next.kind !== 'end') this.unexpected('"and", "or" or the end of the filter');
  }

  private unexpected(expected: string): never {
    throw new FilterProblem(`unexpected "${this.next.text}" ${this.where(this.next)}: expected ${expected}`);
  }

  private or(closing: string | null) {
    this.and(closing);
    while (this.is('or')) this.and(closing, this.take());
  }

  private and(closing: string | null, after?: Token) {
    this.unary(closing, after);
    while (this.is('and')) this.unary(closing, this.take());
  }

  private unary(closing: string | null, after?: Token) {
    if (this.is('not')) after = this.take();
    this.primary(closing, after);
  }

  private group(open: Token, close: ')' | ']') {
    this.or(close);
    if (this.next.text !== close) {
      if (this.next.kind !== 'end' && !this.is('and') && !this.is('or'))
        this.unexpected(`"and", "or" or "${close}"`);
      throw new FilterProblem(`missing "${close}" to close the "${open.text}" at position ${open.at}`);
    }
    this.take();
  }

  private primary(closing: string | null, after?: Token) {
    const t = this.next;
    if (t.text === '(' && t.kind === 'punct') {
      this.group(this.take(), ')');
      return;
    }
    if (t.kind !== 'word' || ['and', 'or', 'not'].includes(t.text.toLowerCase())) {
      const what = after ? ` after "${after.text}"` : '';
      if (t.kind === 'end') throw new FilterProblem(`expected an attribute name${what} ${this.where(t)}`);
      this.unexpected(`an attribute name${what}`);
    }
    const attribute = this.take();
    if (this.next.text === '[' && this.next.kind === 'punct') {
      this.group(this.take(), ']');
      return;
    }
    const op = this.next;
    if (op.kind === 'end' || (closing && op.text === closing))
      throw new FilterProblem(
        `expected an operator (${OPERATORS}) after "${attribute.text}" ${this.where(op)}`,
      );
    if (op.kind !== 'word' || !(COMPARE.has(op.text.toLowerCase()) || op.text.toLowerCase() === 'pr'))
      throw new FilterProblem(`"${op.text}" ${this.where(op)} is not an operator: expected ${OPERATORS}`);
    this.take();
    if (op.text.toLowerCase() === 'pr') return;
    const value = this.next;
    if (value.kind === 'end' || value.kind === 'punct')
      throw new FilterProblem(`expected a value after "${op.text}" ${this.where(value)}`);
    if (value.kind === 'word' && !LITERALS.has(value.text.toLowerCase()))
      throw new FilterProblem(
        `"${value.text}" ${this.where(value)} is not a value: put strings in double quotes ("…"); numbers, true, false and null go without`,
      );
    this.take();
  }
}

/** The first problem of a filter the parser refused, for a person; a generic line when none is found. */
export function describeFilterProblem(filter: string): string {
  try {
    new Reader(tokens(filter)).whole();
  } catch (err) {
    if (err instanceof FilterProblem) return err.message;
    throw err;
  }
  return 'it does not follow the SCIM filter grammar (RFC 7644 §3.4.2.2)';
}
