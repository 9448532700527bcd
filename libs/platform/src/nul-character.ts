/**
 * U+0000 in text. MongoDB stores it; PostgreSQL, under the local store (FerretDB on its
 * PostgreSQL backend), refuses any document or query holding it ("unsupported Unicode escape
 * sequence"), which would surface as a 500 on one store and not the other. No field of the API
 * has a use for it, so input holding it is refused at the door on every store, naming the field.
 */
const MAX_DEPTH = 64;

/** The path (`body.title`, `query.q`, `body.tags[2]`) of the first string or key holding U+0000, or null. */
export function nulCharacterPath(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulCharacterPath(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  if (Buffer.isBuffer(value)) return null;
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (key.includes('\u0000')) return at;
    const found = nulCharacterPath(item, at, depth + 1);
    if (found) return found;
  }
  return null;
}
