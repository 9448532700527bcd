import type { TSchema } from 'typebox';
import type { ErrorExample, RouteSchemas } from '@support-desk/contracts';
import { checkInput } from '@support-desk/platform/http';
import { isAppError } from '@support-desk/platform/core';

type Part = 'body' | 'querystring';

/** Values that break most fields: zero or empty, negative, the wrong type. */
const WRONG_VALUES: Record<Part, unknown[]> = { body: ['', -1, [], {}], querystring: ['0', '', 'x'] };

/** The refusal the services' own validator gives `value` for `part`, or null if it passes. */
function refusal(schema: TSchema, value: unknown, part: Part): ErrorExample | null {
  try {
    checkInput(schema, value, part);
    return null;
  } catch (err) {
    if (!isAppError(err) || err.code !== 'VALIDATION_ERROR') throw err;
    return { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
  }
}

/** The first refusal among inputs that set one field of `schema` to a wrong value. */
function firstFieldRefusal(schema: TSchema, part: Part, prefer: string[] = []): ErrorExample | null {
  const fields = Object.keys((schema as { properties?: object }).properties ?? {});
  for (const field of [...prefer.filter((f) => fields.includes(f)), ...fields]) {
    for (const value of WRONG_VALUES[part]) {
      const example = refusal(schema, { [field]: value }, part);
      if (example) return example;
    }
  }
  return null;
}

/**
 * The 400 an operation shows: what the service answers to a broken input of this very operation
 * (a body without its required fields, else a body field or a query parameter set wrong, `limit`
 * first), computed with the validator the services run, so its field and wording are the
 * service's own. Undefined for an operation without such input (it shows the gateway's 400).
 */
export function validationExample(s: RouteSchemas | undefined): ErrorExample | undefined {
  const required = (s?.body as { required?: string[] } | undefined)?.required ?? [];
  const example =
    (s?.body && required.length > 0 && refusal(s.body, {}, 'body')) ||
    (s?.body && firstFieldRefusal(s.body, 'body')) ||
    (s?.querystring && firstFieldRefusal(s.querystring, 'querystring', ['limit']));
  return example || undefined;
}
