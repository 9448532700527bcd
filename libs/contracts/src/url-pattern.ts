/**
 * The http(s) URLs a receiver may have, as one regular expression every JSON Schema tool reads
 * alike (no `\s`, whose meaning differs between JavaScript and Python): a host name whose last
 * label starts with a letter, a dotted IPv4 address or a bracketed IPv6 address (RFC 3986's
 * grammar), an optional port up to 65535, no credentials, then any path and query without white
 * space, and no fragment. Every string it matches is a URL the WHATWG parser (`new URL`) takes, so
 * what the schema allows the service accepts, and the schema refuses what the parser would.
 */

// No `--` in a label: `xn--` would ask the parser to decode Punycode, which can fail.
const label = '[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*';
// The last label starts with a letter: a numeric one would be read as (a bad) IPv4 address.
const hostName = `(?:${label}\\.)*[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*\\.?`;
const octet = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const ipv4 = `(?:${octet}\\.){3}${octet}`;
const h16 = '[0-9A-Fa-f]{1,4}';
const ls32 = `(?:${h16}:${h16}|${ipv4})`;
const upTo = (n: number) => (n < 0 ? '' : `(?:(?:${h16}:){0,${n}}${h16})?`);
const ipv6 = [
  `(?:${h16}:){6}${ls32}`,
  `::(?:${h16}:){5}${ls32}`,
  `(?:${h16})?::(?:${h16}:){4}${ls32}`,
  `${upTo(1)}::(?:${h16}:){3}${ls32}`,
  `${upTo(2)}::(?:${h16}:){2}${ls32}`,
  `${upTo(3)}::${h16}:${ls32}`,
  `${upTo(4)}::${ls32}`,
  `${upTo(5)}::${h16}`,
  `${upTo(6)}::`,
].join('|');
const port =
  '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}|0))?';
/** White space as JavaScript and Python each read it (their `\s` differ), and NUL: none allowed. */
const noSpace =
  '[^\\x00\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';

/** Anything but white space, NUL and `#` (a fragment is never sent to a receiver: refused). */
const pathChar = noSpace.replace('[^', '[^#');

export const HTTP_URL_PATTERN = `^https?://(?:${hostName}|${ipv4}|\\[(?:${ipv6})\\])${port}(?:[/?]${pathChar}*)?$`;
