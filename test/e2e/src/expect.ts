import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ERROR_STATUS, type ErrorCode } from '@support-desk/contracts';
import type { HttpResponse, Json } from './http.js';
import type { Test } from 'tap';

/** A tap test (the assertion API the helpers use). */
export type Asserts = Test;

const brief = (res: HttpResponse) => `${res.status} ${res.text.slice(0, 300)}`;

/**
 * The success envelope: the wanted status, a JSON body `{success: true, data}` and nothing else.
 * Returns `data` (or undefined when the envelope is wrong, so callers can stop early).
 */
export function expectOk(t: Asserts, res: HttpResponse, status: number, what: string): Json {
  const okStatus = t.equal(res.status, status, `${what}: HTTP ${status}`);
  if (!okStatus) t.fail(`${what}: body was ${brief(res)}`);
  t.match(String(res.headers['content-type']), /^application\/json/, `${what}: JSON content type`);
  const body = res.json;
  if (!t.ok(body && typeof body === 'object', `${what}: JSON body`)) return undefined;
  t.equal(body.success, true, `${what}: success true`);
  t.ok(
    Object.hasOwn(body, 'data') && body.data !== null && typeof body.data === 'object',
    `${what}: data object`,
  );
  t.same(Object.keys(body).sort(), ['data', 'success'], `${what}: envelope has only success and data`);
  return okStatus ? body.data : undefined;
}

/** The error envelope: status, `{success: false, error: {code, message}}`, JSON, a human message. */
export function expectError(
  t: Asserts,
  res: HttpResponse,
  status: number,
  code: ErrorCode,
  what: string,
): void {
  if (!t.equal(res.status, status, `${what}: HTTP ${status}`)) t.fail(`${what}: body was ${brief(res)}`);
  t.match(String(res.headers['content-type']), /^application\/json/, `${what}: JSON content type`);
  const body = res.json;
  if (!t.ok(body && typeof body === 'object', `${what}: JSON body`)) return;
  t.equal(body.success, false, `${what}: success false`);
  t.same(Object.keys(body).sort(), ['error', 'success'], `${what}: envelope has only success and error`);
  t.equal(body.error?.code, code, `${what}: error.code ${code}`);
  t.ok(
    typeof body.error?.message === 'string' && body.error.message.length > 0,
    `${what}: error.message is text`,
  );
  t.notOk(
    /\bat .+\(.+:\d+:\d+\)|node_modules|\/dist\//.test(String(body.error?.message)),
    `${what}: no stack trace`,
  );
  t.equal(ERROR_STATUS[code], status, `${what}: ${code} travels with ${status} (contracts)`);
}

/** `value` matches the schema; reports the first mismatching fields by path. */
export function expectShape(t: Asserts, schema: TSchema, value: unknown, what: string): boolean {
  const errors = Value.Errors(schema, value).slice(0, 6);
  if (errors.length === 0) return t.pass(`${what}: shape`);
  return t.fail(`${what}: shape — ${errors.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`, {
    found: value,
  });
}

/** Exactly these keys (order free). */
export function expectKeys(t: Asserts, value: unknown, keys: string[], what: string): boolean {
  const found = value && typeof value === 'object' ? Object.keys(value).sort() : value;
  return t.same(found, [...keys].sort(), `${what}: fields ${keys.join(', ')}`);
}

export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
