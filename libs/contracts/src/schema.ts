import { type TSchemaOptions, type TUnsafe, Type } from 'typebox';
import { Format } from 'typebox/format';

// RFC 3339 date-time, as ajv-formats checks it for the HTTP layer, for TypeBox's own checks
// (Value.Check, Compile): set over TypeBox's own, which also takes RFC 9557 suffixes.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
Format.Set('date-time', (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));

/**
 * A string restricted to a fixed set, as a plain JSON-Schema `enum` so validation errors read
 * "must be one of: …" and OpenAPI shows the list.
 */
export const StringEnum = <const T extends readonly string[]>(values: T, options: TSchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] }) as TUnsafe<T[number]>;

/** ISO 8601 date-time query or body value. */
export const DateTimeString = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

const patternMessages = new Map<string, string>();

/**
 * A `pattern` whose refusal says what to send (`message`), where "has an invalid format" would
 * not: validation looks the message up by the pattern (`patternMessage`).
 */
export function DescribedPattern(pattern: string, message: string): string {
  patternMessages.set(pattern, message);
  return pattern;
}

/** The message a `DescribedPattern` was registered with, if `pattern` is one. */
export const patternMessage = (pattern: unknown): string | undefined =>
  typeof pattern === 'string' ? patternMessages.get(pattern) : undefined;

/**
 * Names JavaScript gives a meaning to on every object: a map a client sends (user metadata, a
 * directory's attribute mapping) never takes them as keys, so no code that copies or walks such a
 * map can reach `Object.prototype` through it.
 */
export const RESERVED_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

export const isReservedKey = (key: string) => RESERVED_KEYS.includes(key);

/** A map key's pattern: `chars` (a regular expression without anchors), never a reserved name. */
export const mapKeyPattern = (chars: string) => `^(?!(?:${RESERVED_KEYS.join('|')})$)${chars}$`;
