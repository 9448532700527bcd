import { patchBodyValidation, type ScimPatchOperation, ScimError as PatchError, scimPatch } from 'scim-patch';
import { type Filter, parse, stringify } from 'scim2-parse-filter';
import { ScimError, type ScimType } from './errors.js';
import { describeFilterProblem } from './filter-errors.js';
import { attr } from './resources.js';
import {
  attributeNamed,
  type ResourceSchema,
  type SchemaAttribute,
  splitUrn,
  itemSubAttributeNamed,
  subAttributeNamed,
} from './schema.js';

/**
 * SCIM PATCH (RFC 7644 §3.5.2) with one rule: every operation is applied, or the whole PATCH is a
 * SCIM 400 and nothing changes. Never a 200 that silently leaves something out.
 *
 * 1. Each path (and each key of a path-less value) is resolved against the published schema
 *    (`schema.ts`, what `/Schemas` lists), case-insensitively, and rewritten in the schema's case:
 *    scim-patch matches names case-sensitively, so `DisplayName` would otherwise land beside
 *    `displayName` and be lost. An attribute the schema does not have is `invalidPath`; a
 *    read-only one (`id`, `meta`, a user's `groups`) is `mutability`.
 * 2. scim-patch applies the operations to the resource.
 * 3. The caller checks with `assertKept` (kept.ts) that what would be stored shows each touched attribute as
 *    the PATCH left it (a second email, say, cannot be kept: a user has one): else `mutability`.
 */

/** A top-level attribute (or an extension, by URN) an operation changed, and the path it was named by. */
export interface Touched {
  key: string;
  path: string;
}

export interface AppliedPatch<T> {
  patched: T;
  touched: Touched[];
}

const problem = (type: ScimType, detail: string) => new ScimError(400, type, detail);

/** The filter of a value path, its attribute names in the schema's case (`[Type eq "work"]`). */
function canonicalFilter(path: string, parent: SchemaAttribute, text: string): string {
  let filter: Filter;
  try {
    filter = parse(text);
  } catch {
    throw problem('invalidPath', `"${path}": the value filter is invalid: ${describeFilterProblem(text)}`);
  }
  const rename = (f: Filter): Filter => {
    if ('filters' in f) return { ...f, filters: f.filters.map(rename) };
    if ('filter' in f) return { ...f, filter: rename(f.filter) };
    if ('valFilter' in f) throw problem('invalidPath', `"${path}": a value filter cannot hold another one`);
    const sub = subAttributeNamed(parent, f.attrPath);
    if (!sub) throw problem('invalidPath', `"${path}": ${parent.name} has no sub-attribute ${f.attrPath}`);
    return { ...f, attrPath: sub.name };
  };
  return stringify(rename(filter));
}

const PATH = /^([A-Za-z_$][\w$-]*)(?:\[(.*)\])?(?:\.([A-Za-z_$][\w$-]*))?$/s;

interface ResolvedPath {
  /** The path in the schema's case, as scim-patch gets it. */
  canonical: string;
  /** The top-level key of the resource it changes (an attribute's name, or an extension's URN). */
  key: string;
  /** The attribute it ends at (a sub-attribute, when it names one); null: a whole extension. */
  target: SchemaAttribute | null;
}

function resolvePath(resource: ResourceSchema, path: string): ResolvedPath {
  const { urn, rest } = splitUrn(resource, path.trim());
  if (urn && rest === '') return { canonical: urn, key: urn, target: null };
  const m = PATH.exec(rest);
  if (!m) throw problem('invalidPath', `"${path}" is not an attribute path (attribute[filter].subAttribute)`);
  const [, name, filter, subName] = m;
  const attribute = attributeNamed(resource, urn, name);
  if (!attribute) {
    const schema = urn ?? resource.core;
    throw problem(
      'invalidPath',
      `"${path}": ${name} is not an attribute of ${schema} here (GET /Schemas lists what this service keeps)`,
    );
  }
  if (attribute.mutability === 'readOnly')
    throw problem('mutability', `"${path}": ${attribute.name} is read-only`);
  let canonical = `${urn ? `${urn}:` : ''}${attribute.name}`;
  if (filter !== undefined) {
    if (!attribute.multiValued)
      throw problem(
        'invalidPath',
        `"${path}": ${attribute.name} has one value, a value filter does not apply`,
      );
    canonical += `[${canonicalFilter(path, attribute, filter)}]`;
  }
  let target = attribute;
  if (subName !== undefined) {
    const sub = subAttributeNamed(attribute, subName);
    if (!sub) throw problem('invalidPath', `"${path}": ${attribute.name} has no sub-attribute ${subName}`);
    if (sub.mutability === 'readOnly') throw problem('mutability', `"${path}": ${sub.name} is read-only`);
    canonical += `.${sub.name}`;
    target = sub;
  }
  return { canonical, key: urn ?? attribute.name, target };
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A simple attribute's value: a string, number, boolean or null, never an object or a list. */
function scalarValue(path: string, name: string, v: unknown): unknown {
  if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return v;
  throw problem(
    'invalidValue',
    `"${path}": ${name} takes one simple value, not ${Array.isArray(v) ? 'a list' : 'an object'}`,
  );
}

/**
 * A value checked against the attribute it is for and with the keys of complex values in the
 * schema's case. Every key must be a sub-attribute the schema defines (or, in a multi-valued
 * attribute's items, one of RFC 7643's defaults): anything else (`__proto__`, `constructor`,
 * `toString`, a dotted name) is `invalidPath` before any operation is applied, so nothing the
 * schema does not name ever reaches scim-patch, whose traversal follows such keys into
 * `Object.prototype`. Simple values are scalars.
 */
function canonicalValue(path: string, attribute: SchemaAttribute | null, value: unknown): unknown {
  if (!attribute) return value;
  const item = (v: unknown): unknown => {
    if (attribute.type !== 'complex' || !isObject(v)) return scalarValue(path, attribute.name, v);
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => {
        const sub = itemSubAttributeNamed(attribute, k);
        if (!sub) throw problem('invalidPath', `"${path}": ${attribute.name} has no sub-attribute ${k}`);
        return [sub.name, scalarValue(path, `${attribute.name}.${sub.name}`, x)];
      }),
    );
  };
  if (attribute.multiValued && Array.isArray(value)) return value.map(item);
  return item(value);
}

/**
 * A whole extension's value (`{"department": …, "manager": {…}}`), each key one of its attributes,
 * in the schema's case. A `schemas` key inside it (some clients serialize extensions with one)
 * says nothing the URN does not, and is left out.
 */
function extensionValue(resource: ResourceSchema, urn: string, value: unknown): Record<string, unknown> {
  if (!isObject(value)) throw problem('invalidValue', `the value of ${urn} must be an object`);
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k.toLowerCase() !== 'schemas')
      .map(([k, x]) => {
        const inner = resolvePath(resource, `${urn}:${k}`);
        return [inner.canonical.slice(urn.length + 1), canonicalValue(k, inner.target, x)];
      }),
  );
}

/** A path-less operation's value, each key resolved like a path (an extension's keys inside it too). */
function canonicalObject(resource: ResourceSchema, value: unknown, touched: Touched[]) {
  if (!isObject(value)) throw problem('invalidValue', 'an operation without a path needs an object value');
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const resolved = resolvePath(resource, key);
    touched.push({ key: resolved.key, path: key });
    out[resolved.canonical] =
      resolved.target === null
        ? extensionValue(resource, resolved.key, v)
        : canonicalValue(key, resolved.target, v);
  }
  return out;
}

/**
 * An operation whose path is a schema extension's URN itself names the whole extension object,
 * which scim-patch cannot address (it splits the URN at its last dot). Applied here: add merges
 * the value's attributes, replace sets the object, remove deletes it.
 */
function applyToExtension(resource: Record<string, unknown>, urn: string, op: ScimPatchOperation) {
  const key = Object.keys(resource).find((k) => k.toLowerCase() === urn.toLowerCase()) ?? urn;
  if (op.op === 'remove') {
    delete resource[key];
    return;
  }
  const value = 'value' in op ? (op.value as Record<string, unknown>) : {};
  const before = op.op === 'add' ? (resource[key] as Record<string, unknown> | undefined) : undefined;
  resource[key] = { ...(isObject(before) ? before : {}), ...value };
}

/**
 * Applies a SCIM PatchOp body to a resource (the paths Okta and Entra ID send: `active`,
 * `name.givenName`, `emails[type eq "work"].value`, the enterprise URN's attributes, `members`,
 * `members[value eq "…"]`, and no path with an object value) and answers the patched copy and what
 * it touched. Operation and attribute names are case-insensitive (Entra sends `Replace`).
 */
export function applyPatch<T extends Record<string, unknown>>(
  resource: T,
  body: unknown,
  schema: ResourceSchema,
): AppliedPatch<T> {
  const operations = attr(body, 'Operations');
  if (!Array.isArray(operations) || operations.length === 0) {
    throw problem('invalidSyntax', 'Operations must be a non-empty array');
  }
  if (operations.length > 1000) throw problem('tooMany', 'at most 1000 operations in one PATCH');
  const touched: Touched[] = [];
  const extensionOps = new Map<ScimPatchOperation, string>();
  const ops = operations.flatMap((o): ScimPatchOperation[] => {
    const op = attr(o, 'op');
    if (typeof op !== 'string') throw problem('invalidSyntax', 'every operation needs an op');
    const name = op.toLowerCase();
    const path = attr(o, 'path');
    const value = attr(o, 'value');
    if (typeof path !== 'string') {
      // Without a path: the value's attributes, and each whole extension in it as an operation
      // of its own (scim-patch would split an extension's URN at its dots).
      if (path !== undefined || value === undefined)
        return [{ op: name, ...(path !== undefined ? { path } : {}) } as ScimPatchOperation];
      const keyed = canonicalObject(schema, value, touched);
      const urns = Object.keys(keyed).filter((k) => schema.extensions.includes(k));
      const rest = Object.fromEntries(Object.entries(keyed).filter(([k]) => !urns.includes(k)));
      const extensions = urns.map((urn) => {
        const canonical = { op: name, path: urn, value: keyed[urn] } as ScimPatchOperation;
        extensionOps.set(canonical, urn);
        return canonical;
      });
      const plain = Object.keys(rest).length ? [{ op: name, value: rest } as ScimPatchOperation] : [];
      return [...plain, ...extensions];
    }
    const resolved = resolvePath(schema, path);
    touched.push({ key: resolved.key, path });
    const whole = resolved.target === null;
    const given =
      value === undefined
        ? undefined
        : whole
          ? extensionValue(schema, resolved.key, value)
          : canonicalValue(path, resolved.target, value);
    const canonical = {
      op: name,
      path: resolved.canonical,
      ...(given !== undefined ? { value: given } : {}),
    } as ScimPatchOperation;
    if (whole) {
      if (name !== 'remove' && given === undefined)
        throw problem('invalidValue', `the value of ${resolved.key} must be an object`);
      extensionOps.set(canonical, resolved.key);
    }
    return [canonical];
  });
  try {
    patchBodyValidation({ schemas: (attr(body, 'schemas') as never) ?? [], Operations: ops });
    let patched = structuredClone(resource) as Record<string, unknown>;
    for (const op of ops) {
      const urn = extensionOps.get(op);
      if (urn) applyToExtension(patched, urn, op);
      else
        patched = scimPatch(patched as never, [op], {
          mutateDocument: true,
          treatMissingAsAdd: true,
        }) as never;
    }
    // A key neither the resource had nor the schema names is one scim-patch made up (a name it
    // split or re-cased): nothing would keep it, so the PATCH is refused rather than half applied.
    const stray = Object.keys(patched).find(
      (k) =>
        !(k in resource) && !schema.extensions.includes(k) && attributeNamed(schema, null, k)?.name !== k,
    );
    if (stray)
      throw problem('invalidPath', `the PATCH would write "${stray}", which is not an attribute here`);
    return { patched: patched as T, touched };
  } catch (err) {
    if (err instanceof PatchError) {
      throw problem((err.scimCode as ScimType | undefined) ?? 'invalidSyntax', err.message);
    }
    throw err;
  }
}
