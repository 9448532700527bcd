import type { EventContext } from '@support-desk/platform';
import { patchBodyValidation, type ScimPatchOperation, ScimError as PatchError, scimPatch } from 'scim-patch';
import type { IdentityProviderDoc } from '../../store/index.js';
import { invalidValue, ScimError, type ScimType } from './errors.js';
import { attr, ENTERPRISE_SCHEMA, type Location } from './resources.js';

const EXTENSION_SCHEMAS = [ENTERPRISE_SCHEMA];

/** One authenticated SCIM call: the connection it is for, its event context, and where it is served. */
export interface ScimCall {
  connection: IdentityProviderDoc;
  ctx: EventContext;
  at: Location;
}

export const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/** Page size: 100 by default, at most 200 (`filter.maxResults` in ServiceProviderConfig). */
export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 200;

export interface ListParams {
  filter?: string;
  startIndex?: string;
  count?: string;
  attributes?: string;
  excludedAttributes?: string;
}

/** RFC 7644 §3.4.2.4: startIndex < 1 is 1; count < 0 is 0; both integers. */
export function pageOf(params: ListParams): { startIndex: number; count: number } {
  const int = (v: string | undefined, name: string, def: number) => {
    if (v === undefined || v === '') return def;
    if (!/^-?\d{1,9}$/.test(v)) throw invalidValue(`${name} must be an integer`);
    return Number(v);
  };
  return {
    startIndex: Math.max(1, int(params.startIndex, 'startIndex', 1)),
    count: Math.min(MAX_COUNT, Math.max(0, int(params.count, 'count', DEFAULT_COUNT))),
  };
}

export function listResponse(resources: object[], total: number, startIndex: number) {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: total,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

const names = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

const ALWAYS = new Set(['id', 'schemas', 'meta']);

/**
 * `attributes` / `excludedAttributes` (RFC 7644 §3.9) on top-level attributes (an extension's URN
 * counts as one; `name.givenName` selects its whole parent): `id`, `schemas`, `meta` always stay.
 */
export function project(resource: Record<string, unknown>, params: ListParams) {
  const only = names(params.attributes).map((n) => n.split('.')[0]);
  const without = new Set(names(params.excludedAttributes));
  return Object.fromEntries(
    Object.entries(resource).filter(([key]) => {
      const k = key.toLowerCase();
      if (ALWAYS.has(k)) return true;
      if (only.length > 0) return only.includes(k);
      return !without.has(k);
    }),
  );
}

/**
 * An operation whose path is a schema extension's URN itself (`urn:…:enterprise:2.0:User`) names
 * the whole extension object, which scim-patch cannot address (it splits the URN at its last dot
 * and writes `urn:…:enterprise:2` → `0:User`). Applied here: add merges the value's attributes,
 * replace sets the object, remove deletes it. Answers false for any other operation.
 */
function applyToExtension(resource: Record<string, unknown>, op: ScimPatchOperation): boolean {
  const path = 'path' in op && typeof op.path === 'string' ? op.path.trim().toLowerCase() : null;
  if (!path || !EXTENSION_SCHEMAS.some((urn) => urn.toLowerCase() === path)) return false;
  const key =
    Object.keys(resource).find((k) => k.toLowerCase() === path) ??
    EXTENSION_SCHEMAS.find((urn) => urn.toLowerCase() === path)!;
  const value = 'value' in op ? (op.value as unknown) : undefined;
  if (op.op === 'remove') {
    delete resource[key];
    return true;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ScimError(400, 'invalidValue', `the value of ${key} must be an object`);
  }
  const before = op.op === 'add' ? (resource[key] as Record<string, unknown> | undefined) : undefined;
  resource[key] = { ...(before && typeof before === 'object' ? before : {}), ...value };
  return true;
}

/**
 * Applies a SCIM PatchOp body to a resource with scim-patch (add/replace/remove with the paths Okta
 * and Entra ID send: `active`, `name.givenName`, `emails[type eq "work"].value`, the enterprise
 * URN's attributes, `members`, `members[value eq "…"]`, and no path with an object value), and
 * answers the patched copy. Operation names are case-insensitive (Entra sends `Replace`).
 */
export function applyPatch<T extends Record<string, unknown>>(resource: T, body: unknown): T {
  const operations = attr(body, 'Operations');
  if (!Array.isArray(operations) || operations.length === 0) {
    throw new ScimError(400, 'invalidSyntax', 'Operations must be a non-empty array');
  }
  if (operations.length > 1000) throw new ScimError(400, 'tooMany', 'at most 1000 operations in one PATCH');
  const ops = operations.map((o) => {
    const op = attr(o, 'op');
    if (typeof op !== 'string') throw new ScimError(400, 'invalidSyntax', 'every operation needs an op');
    const path = attr(o, 'path');
    const value = attr(o, 'value');
    return {
      op: op.toLowerCase(),
      ...(path !== undefined ? { path } : {}),
      ...(value !== undefined ? { value } : {}),
    };
  }) as ScimPatchOperation[];
  try {
    patchBodyValidation({ schemas: (attr(body, 'schemas') as never) ?? [], Operations: ops });
    let patched = structuredClone(resource) as Record<string, unknown>;
    for (const op of ops) {
      patched = applyToExtension(patched, op)
        ? patched
        : (scimPatch(patched as never, [op], { mutateDocument: true, treatMissingAsAdd: true }) as never);
    }
    return patched as T;
  } catch (err) {
    if (err instanceof PatchError) {
      throw new ScimError(400, (err.scimCode as ScimType | undefined) ?? 'invalidSyntax', err.message);
    }
    throw err;
  }
}
