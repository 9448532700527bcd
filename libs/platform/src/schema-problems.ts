import type { TSchema } from 'typebox';
import { Format } from 'typebox/format';
import { Value } from 'typebox/value';

/**
 * What is wrong with a value by a contract schema, outside fastify's validator (configuration,
 * deskctl's flags, what identity providers send, RPC replies, events): a JSON pointer and a
 * message, worded as TypeBox 0.34 worded them (`/email Expected required property`). TypeBox 1.x
 * reports ajv-shaped errors in another order with other words; these messages reach SCIM
 * clients, deskctl users, operators' logs and dead letters, so they keep the words and the order
 * they had (required fields, then unknown ones, then each field in the schema's order).
 */
export interface SchemaProblem {
  /** A JSON pointer to the value (`''` for the value itself). */
  path: string;
  message: string;
  /** For a value that matches no alternative of a union: the first problem by each alternative. */
  alternatives?: SchemaProblem[];
}

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && !Number.isNaN(v);
const escapeKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The first problem of `value` by `schema`, or null when it passes. */
export function firstSchemaProblem(schema: TSchema, value: unknown): SchemaProblem | null {
  if (Value.Check(schema, value)) return null;
  const first = problems(schema as Schema, '', value).next();
  if (!first.done) return first.value;
  // A keyword the walk below does not know: TypeBox's own words rather than none.
  const [error] = Value.Errors(schema, value);
  return { path: error?.instancePath ?? '', message: error?.message ?? 'is invalid' };
}

function* problems(schema: Schema, path: string, value: unknown): Generator<SchemaProblem> {
  const problem = (message: string): SchemaProblem => ({ path, message });
  if (Array.isArray(schema.anyOf)) {
    if (Value.Check(schema as TSchema, value)) return;
    const alternatives = (schema.anyOf as Schema[])
      .map((alternative) => problems(alternative, path, value).next().value)
      .filter((first): first is SchemaProblem => first !== undefined);
    return yield { path, message: 'Expected union value', alternatives };
  }
  if ('const' in schema) {
    if (value === schema.const) return;
    const expected = typeof schema.const === 'string' ? `'${schema.const}'` : String(schema.const);
    return yield problem(`Expected ${expected}`);
  }
  // The contracts' StringEnum was a custom kind of TypeBox 0.34, and refused as one.
  if (Array.isArray(schema.enum)) {
    if (!schema.enum.includes(value)) yield problem("Expected kind 'StringEnum'");
    return;
  }
  switch (schema.type) {
    case 'object':
      return yield* schema.patternProperties
        ? recordProblems(schema, path, value)
        : objectProblems(schema, path, value);
    case 'array':
      return yield* arrayProblems(schema, path, value);
    case 'string':
      return yield* stringProblems(schema, path, value);
    case 'integer':
    case 'number':
      return yield* numberProblems(schema, path, value);
    case 'boolean':
      if (typeof value !== 'boolean') yield problem('Expected boolean');
      return;
    case 'null':
      if (value !== null) yield problem('Expected null');
      return;
  }
}

function* propertyCountProblems(schema: Schema, path: string, value: object): Generator<SchemaProblem> {
  const count = Object.getOwnPropertyNames(value).length;
  if (isNumber(schema.minProperties) && count < schema.minProperties)
    yield { path, message: `Expected object to have at least ${schema.minProperties} properties` };
  if (isNumber(schema.maxProperties) && count > schema.maxProperties)
    yield { path, message: `Expected object to have no more than ${schema.maxProperties} properties` };
}

function* objectProblems(schema: Schema, path: string, value: unknown): Generator<SchemaProblem> {
  if (!isObject(value)) return yield { path, message: 'Expected object' };
  yield* propertyCountProblems(schema, path, value);
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const given = Object.getOwnPropertyNames(value);
  for (const key of required) {
    if (!given.includes(key))
      yield { path: `${path}/${escapeKey(key)}`, message: 'Expected required property' };
  }
  const unknown = given.filter((key) => !Object.hasOwn(properties, key));
  if (schema.additionalProperties === false) {
    for (const key of unknown) yield { path: `${path}/${escapeKey(key)}`, message: 'Unexpected property' };
  } else if (isObject(schema.additionalProperties)) {
    for (const key of unknown)
      yield* problems(schema.additionalProperties, `${path}/${escapeKey(key)}`, value[key]);
  }
  for (const [key, property] of Object.entries(properties)) {
    if (required.includes(key) || value[key] !== undefined)
      yield* problems(property, `${path}/${escapeKey(key)}`, value[key]);
  }
}

/** A map (TypeBox's Record: one pattern for its keys). */
function* recordProblems(schema: Schema, path: string, value: unknown): Generator<SchemaProblem> {
  if (!isObject(value)) return yield { path, message: 'Expected object' };
  yield* propertyCountProblems(schema, path, value);
  const [pattern, valueSchema] = Object.entries(schema.patternProperties as Record<string, Schema>)[0]!;
  const keys = new RegExp(pattern);
  for (const [key, item] of Object.entries(value)) {
    if (keys.test(key)) yield* problems(valueSchema, `${path}/${escapeKey(key)}`, item);
  }
  for (const [key, item] of Object.entries(value)) {
    if (keys.test(key)) continue;
    if (isObject(schema.additionalProperties))
      yield* problems(schema.additionalProperties, `${path}/${escapeKey(key)}`, item);
    else if (schema.additionalProperties === false)
      return yield { path: `${path}/${escapeKey(key)}`, message: 'Unexpected property' };
  }
}

function* arrayProblems(schema: Schema, path: string, value: unknown): Generator<SchemaProblem> {
  if (!Array.isArray(value)) return yield { path, message: 'Expected array' };
  if (isNumber(schema.minItems) && value.length < schema.minItems)
    yield { path, message: `Expected array length to be greater or equal to ${schema.minItems}` };
  if (isNumber(schema.maxItems) && value.length > schema.maxItems)
    yield { path, message: `Expected array length to be less or equal to ${schema.maxItems}` };
  if (isObject(schema.items)) {
    for (let i = 0; i < value.length; i++) yield* problems(schema.items, `${path}/${i}`, value[i]);
  }
  if (schema.uniqueItems === true && new Set(value.map((item) => Value.Hash(item))).size !== value.length)
    yield { path, message: 'Expected array elements to be unique' };
}

function* stringProblems(schema: Schema, path: string, value: unknown): Generator<SchemaProblem> {
  if (typeof value !== 'string') return yield { path, message: 'Expected string' };
  if (isNumber(schema.minLength) && value.length < schema.minLength)
    yield { path, message: `Expected string length greater or equal to ${schema.minLength}` };
  if (isNumber(schema.maxLength) && value.length > schema.maxLength)
    yield { path, message: `Expected string length less or equal to ${schema.maxLength}` };
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value))
    yield { path, message: `Expected string to match '${schema.pattern}'` };
  if (typeof schema.format === 'string' && !Format.Test(schema.format, value))
    yield { path, message: `Expected string to match '${schema.format}' format` };
}

function* numberProblems(schema: Schema, path: string, value: unknown): Generator<SchemaProblem> {
  const integer = schema.type === 'integer';
  const kind = integer ? 'integer' : 'number';
  if (integer ? !Number.isInteger(value) : !isNumber(value))
    return yield { path, message: `Expected ${kind}` };
  const n = value as number;
  if (isNumber(schema.exclusiveMaximum) && !(n < schema.exclusiveMaximum))
    yield { path, message: `Expected ${kind} to be less than ${schema.exclusiveMaximum}` };
  if (isNumber(schema.exclusiveMinimum) && !(n > schema.exclusiveMinimum))
    yield { path, message: `Expected ${kind} to be greater than ${schema.exclusiveMinimum}` };
  if (isNumber(schema.maximum) && !(n <= schema.maximum))
    yield { path, message: `Expected ${kind} to be less or equal to ${schema.maximum}` };
  if (isNumber(schema.minimum) && !(n >= schema.minimum))
    yield { path, message: `Expected ${kind} to be greater or equal to ${schema.minimum}` };
  if (isNumber(schema.multipleOf) && n % schema.multipleOf !== 0)
    yield { path, message: `Expected ${kind} to be a multiple of ${schema.multipleOf}` };
}

/**
 * The problem to name for a value that matches no alternative of a union, recursively: the
 * alternative that matched furthest (the longest path), e.g. `/user/email Expected required
 * property`, rather than "Expected union value".
 */
export function describeSchemaProblem(problem: SchemaProblem | null): string {
  if (!problem) return '(root) is invalid';
  const deepest = [...(problem.alternatives ?? [])].sort((a, b) => b.path.length - a.path.length)[0];
  if (deepest) return describeSchemaProblem(deepest);
  return `${problem.path || '(root)'} ${problem.message}`;
}
