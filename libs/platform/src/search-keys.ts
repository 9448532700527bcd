/**
 * Search by stored keys (issue 31): FerretDB on PostgreSQL pushes down only top-level scalar
 * equalities, so a search by `$regex` decodes every document it may match. A document keeps
 * instead, in one array, the lower-cased prefixes (up to `SEARCH_KEY_LENGTH` characters) of its
 * texts from their start and from every word start in them (a letter or digit after anything
 * else, or a character that is neither: `@corp` in an email), and a search is one element
 * equality (a GIN lookup on PostgreSQL, a multikey index on MongoDB): a word of the text starts
 * with it. Measured against the other choices: every substring as a key is quadratic in the
 * text's length (about 500 keys for a 30-character email) where these are a few dozen.
 */

/** A search matches on at most this many characters through the stored keys (the rest is checked on what they find). */
export const SEARCH_KEY_LENGTH = 12;

const wordChar = /[\p{L}\p{N}]/u;

function keysOfText(text: string, into: Set<string>) {
  const lower = text.toLowerCase();
  for (let i = 0; i < lower.length; i++) {
    const starts = i === 0 || !wordChar.test(lower[i - 1]!) || !wordChar.test(lower[i]!);
    if (!starts || lower[i]!.trim() === '') continue;
    for (let n = 1; n <= SEARCH_KEY_LENGTH && i + n <= lower.length; n++) into.add(lower.slice(i, i + n));
  }
}

/** The search keys of these texts (a name, an email). */
export function searchKeysOf(...texts: string[]): string[] {
  const keys = new Set<string>();
  for (const text of texts) keysOfText(text, keys);
  return [...keys];
}

/** The stored key a search text is looked up by (lower-cased, its first `SEARCH_KEY_LENGTH` characters). */
export const searchKeyOf = (text: string) => text.toLowerCase().slice(0, SEARCH_KEY_LENGTH);
