import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';

/** Resource id prefixes. Ids are `<prefix>_<26 chars>`: 10 chars of millisecond time then 16 of randomness. */
export const ID_PREFIX = {
  request: 'req',
  comment: 'cmt',
  attachment: 'att',
  user: 'usr',
  group: 'grp',
  event: 'evt',
  apiKey: 'key',
  oauthClient: 'cli',
  oauthGrant: 'gnt',
  webhook: 'whk',
  delivery: 'dlv',
  slaPolicy: 'slp',
  job: 'job',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

// Crockford base32, lower case: sorts lexicographically in time order.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BODY = '[0-9a-hjkmnp-tv-z]{26}';

let lastTime = 0;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

// Random bytes drawn 4 KiB at a time: one randomBytes call per id was 2 % of the requests
// service's CPU on creates (each create makes several ids).
let pool = Buffer.alloc(0);
let poolOffset = 0;

function randomDigits(): number[] {
  if (poolOffset + 16 > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, (poolOffset += 16));
  return Array.from(bytes, (b) => b % 32);
}

/** Monotonic within a process: ids made in the same millisecond still sort in creation order. */
function nextRandom(now: number): number[] {
  if (now === lastTime && lastRandom.length === 16) {
    const next = [...lastRandom];
    for (let i = 15; i >= 0; i--) {
      if (next[i] < 31) {
        next[i]++;
        break;
      }
      next[i] = 0;
    }
    lastRandom = next;
  } else {
    lastTime = now;
    lastRandom = randomDigits();
  }
  return lastRandom;
}

export function newId(kind: IdKind, now = Date.now()): string {
  const random = nextRandom(now)
    .map((d) => ALPHABET[d])
    .join('');
  return `${ID_PREFIX[kind]}_${encodeTime(now)}${random}`;
}

/**
 * The millisecond an id was made at (its 10 time characters), or undefined for a string that is
 * not an id: ids sort in this time, so a list in id order can be read by the hours of it.
 */
export function timeOfId(id: string): number | undefined {
  const body = id.slice(id.indexOf('_') + 1);
  if (!id.includes('_') || body.length < 10) return undefined;
  let ms = 0;
  for (const c of body.slice(0, 10)) {
    const digit = ALPHABET.indexOf(c);
    if (digit < 0) return undefined;
    ms = ms * 32 + digit;
  }
  return ms;
}

/**
 * The time part of the ids of `kind` made at `ms` (`dlv_01jd2k3m4n`): every id made at `ms` or
 * later sorts after it, every one made earlier before it.
 */
export const idFloorAt = (kind: IdKind, ms: number): string => `${ID_PREFIX[kind]}_${encodeTime(ms)}`;

export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIX[kind]}_${BODY}$`;
}

export function isId(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && new RegExp(idPattern(kind)).test(value);
}

/** What an id of this kind looks like, for messages: `req_01jd2k3m4n5p6q7r8s9t0v1w2x`. */
export const idExample = (kind: IdKind) => `${ID_PREFIX[kind]}_01jd2k3m4n5p6q7r8s9t0v1w2x`;

const KIND_BY_PATTERN = new Map(
  (Object.keys(ID_PREFIX) as IdKind[]).map((kind) => [idPattern(kind), kind] as const),
);

/** The kind of id a schema pattern (from `IdSchema`) describes, to name it in an error. */
export const idKindOfPattern = (pattern: unknown): IdKind | undefined =>
  typeof pattern === 'string' ? KIND_BY_PATTERN.get(pattern) : undefined;

/**
 * TypeBox schema for an id of one kind. In a path a malformed id answers 404 like an unknown one
 * (ids are opaque); in a body or query it is a 400 naming the expected shape.
 */
export const IdSchema = (kind: IdKind, description?: string) =>
  Type.String({
    pattern: idPattern(kind),
    description: description ?? `${ID_PREFIX[kind]}_ id`,
    examples: [idExample(kind)],
  });
