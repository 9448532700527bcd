import { createRequire } from 'node:module';
import {
  type ErrorDetail,
  ID_PREFIX,
  idExample,
  idKindOfPattern,
  patternMessage,
} from '@support-desk/contracts';
import type { FastifySchemaCompiler } from 'fastify';
import { AppError } from './errors.js';

/**
 * How every service validates its input.
 *
 * JSON bodies are checked strictly: `"title": 123` or `"isInternal": "true"` is a 400, never
 * quietly turned into `"123"` or `true`. Query strings and path parameters are text on the wire, so
 * they still convert (`?limit=5` is the integer 5, a single `?status=x` an array where a list is
 * expected). Every problem is reported, not only the first (`allErrors`): bodies are bounded by the
 * body limit and every list and string in the contracts has a maximum, which keeps the cost of
 * collecting them all small.
 */
const COMMON = { removeAdditional: false, useDefaults: true, allErrors: true } as const;

type AjvCompilerModule = typeof import('@fastify/ajv-compiler');
type Compile = ReturnType<ReturnType<AjvCompilerModule['AjvCompiler']>>;

// fastify's own compiler (ajv with ajv-formats), loaded on the first route like fastify does, so
// a process that serves no route (deskctl) never pays for loading ajv.
let compilers: { body: Compile; text: Compile } | undefined;
function loadCompilers() {
  const { AjvCompiler } = createRequire(import.meta.url)('@fastify/ajv-compiler') as AjvCompilerModule;
  const buildPool = AjvCompiler();
  return {
    body: buildPool({}, { customOptions: { ...COMMON, coerceTypes: false } }),
    text: buildPool({}, { customOptions: { ...COMMON, coerceTypes: 'array' } }),
  };
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = (route) => {
  compilers ??= loadCompilers();
  return (route.httpPart === 'body' ? compilers.body : compilers.text)(route as Parameters<Compile>[0]);
};

/** At most this many details in one answer: enough to fix a body, bounded for a hostile one. */
const MAX_DETAILS = 20;

export interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const CONTEXT_LABEL: Record<string, string> = {
  querystring: 'query',
  params: 'path',
  body: 'body',
  headers: 'header',
};

const EXAMPLE_DATE_TIME = '2026-11-25T09:30:00Z';
const article = (word: string) => (/^[aeio]/.test(word) ? 'an' : 'a');

/** What would be valid, in words a client developer can act on. */
function explain(e: AjvError): string {
  const p = e.params;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type':
      return `must be ${article(String(p.type))} ${String(p.type).replace(',', ' or ')}`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'format':
      return p.format === 'date-time'
        ? `must be an RFC 3339 date-time such as ${EXAMPLE_DATE_TIME}`
        : `must be a valid ${String(p.format)}`;
    case 'pattern': {
      const kind = idKindOfPattern(p.pattern);
      if (kind) return `must be ${article(kind)} ${kind} id such as ${idExample(kind)}`;
      if (p.pattern === '\\S') return 'must not be blank';
      return patternMessage(p.pattern) ?? 'has an invalid format';
    }
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minItems':
      return `must have at least ${String(p.limit)} items`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'uniqueItems':
      return 'must not repeat an item';
    default:
      return e.message ?? 'is invalid';
  }
}

function fieldOf(e: AjvError, context: string): string {
  const segments = e.instancePath.split('/').filter(Boolean);
  if (e.keyword === 'required') segments.push(String(e.params.missingProperty));
  if (e.keyword === 'additionalProperties') segments.push(String(e.params.additionalProperty));
  return [CONTEXT_LABEL[context] ?? context, ...segments].join('.');
}

/**
 * One detail per field. A value that may also be `null` (a union with null) fails both branches:
 * the null branch's "must be null" and the union's own error are folded into the other branch's
 * message, which then says "or null".
 */
function validationDetails(errors: AjvError[], context = 'body'): ErrorDetail[] {
  const byField = new Map<string, { messages: string[]; orNull: boolean }>();
  for (const e of errors) {
    const field = fieldOf(e, context);
    const entry = byField.get(field) ?? { messages: [], orNull: false };
    byField.set(field, entry);
    // The union's or the condition's own error says less than the branch's that comes with it.
    if (e.keyword === 'anyOf' || e.keyword === 'if') continue;
    if (e.keyword === 'type' && e.params.type === 'null') {
      entry.orNull = true;
      continue;
    }
    const message = explain(e);
    if (!entry.messages.includes(message)) entry.messages.push(message);
  }
  const details: ErrorDetail[] = [];
  for (const [field, { messages, orNull }] of byField) {
    if (messages.length === 0) continue;
    details.push({ field, message: messages.join(' and ') + (orNull ? ', or null' : '') });
  }
  return details.slice(0, MAX_DETAILS);
}

/** "body.title must be a string; body.priority must be one of: …": every problem, in one line. */
export function validationFailure(errors: AjvError[], context = 'body'): AppError {
  const details = validationDetails(errors, context);
  if (details.length === 0) return new AppError('VALIDATION_ERROR', 'Invalid request');
  // Ids are opaque: a malformed one in the path names no resource, like an unknown one.
  if (context === 'params') return pathNotFound(errors);
  const message = details.map((d) => `${d.field} ${d.message}`).join('; ');
  return new AppError('VALIDATION_ERROR', message, {}, details);
}

const KIND_LABEL = (kind: string) => kind.charAt(0).toUpperCase() + kind.slice(1);

function pathNotFound(errors: AjvError[]): AppError {
  const kind = errors.map((e) => idKindOfPattern(e.params.pattern)).find(Boolean);
  if (!kind) return new AppError('NOT_FOUND', 'Not found');
  return new AppError(
    'NOT_FOUND',
    `${KIND_LABEL(kind)} not found (${kind} ids look like ${idExample(kind)}, starting with ${ID_PREFIX[kind]}_)`,
  );
}

type Part = 'body' | 'querystring' | 'params';
type CheckInput = ((value: unknown) => boolean) & { errors?: AjvError[] | null };
const inputChecks: Record<Part, WeakMap<object, CheckInput>> = {
  body: new WeakMap(),
  querystring: new WeakMap(),
  params: new WeakMap(),
};

/**
 * Input that does not come over HTTP (an RPC request) checked exactly as a route checks it:
 * the same compiler, conversions and messages, so a refusal reads as the HTTP API's would
 * (`body.url has an invalid format`, a malformed path id a NOT_FOUND). Returns the value (with
 * defaults applied) or throws the same `AppError`.
 */
export function checkInput<T>(schema: object, value: unknown, part: Part): T {
  let check = inputChecks[part].get(schema);
  if (!check) {
    compilers ??= loadCompilers();
    const compile = part === 'body' ? compilers.body : compilers.text;
    check = compile({
      schema,
      method: 'POST',
      url: '/rpc',
      httpPart: part,
    } as Parameters<Compile>[0]) as CheckInput;
    inputChecks[part].set(schema, check);
  }
  if (!check(value)) throw validationFailure(check.errors ?? [], part);
  return value as T;
}
