import { ScimError } from './errors.js';
import { isObject, type Touched } from './patch.js';
import { attr } from './resources.js';

/**
 * A value as compared by `assertKept`: strings trimmed and case-folded (`"True"` is true), empty
 * values absent, objects by their lower-cased keys, multi-valued complex attributes (emails,
 * members) by the set of their `value`s.
 */
function comparable(v: unknown): unknown {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    return s === '' ? undefined : s === 'true' ? true : s === 'false' ? false : s;
  }
  if (Array.isArray(v)) {
    const items = v
      .map((x) => comparable(isObject(x) && attr(x, 'value') !== undefined ? attr(x, 'value') : x))
      .filter((x) => x !== undefined)
      .map((x) => JSON.stringify(x));
    return items.length ? [...new Set(items)].sort() : undefined;
  }
  if (isObject(v)) {
    const entries = Object.entries(v)
      .map(([k, x]) => [k.toLowerCase(), comparable(x)] as const)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => a.localeCompare(b));
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  return v;
}

const shown = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));

/**
 * Every attribute a PATCH touched reads, in `stored` (the resource as it would be stored and
 * served), as the PATCH left it in `patched`: else a 400 `mutability` naming the operation's path.
 * An attribute the PATCH removed or emptied may take the service's value (a display name made
 * from the name parts, the email from userName).
 */
export function assertKept(
  patched: Record<string, unknown>,
  stored: Record<string, unknown>,
  touched: Touched[],
  why: (key: string) => string | null = () => null,
): void {
  for (const { key, path } of touched) {
    let asPatched = comparable(attr(patched, key));
    const asStored = comparable(attr(stored, key));
    if (asPatched === undefined) continue;
    // A complex attribute given as its value alone (`manager: "id"`) is `{value: "id"}`.
    if (typeof asPatched !== 'object' && isObject(asStored)) asPatched = { value: asPatched };
    if (JSON.stringify(asPatched) === JSON.stringify(asStored)) continue;
    throw new ScimError(
      400,
      'mutability',
      `"${path}" cannot be applied: ${why(key) ?? `${key} would read ${shown(asPatched)}, but this service keeps ${shown(asStored)}`}`,
    );
  }
}
