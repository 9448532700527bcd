import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** The methods an Idempotency-Key applies to (GET, HEAD and DELETE are idempotent by themselves). */
export const takesIdempotencyKey = (method: string) => method === 'POST' || method === 'PATCH';

/** Longest Idempotency-Key accepted (Stripe's limit; a UUID is 36). */
const IDEMPOTENCY_KEY_MAX = 255;
const PRINTABLE_ASCII = /^[\x20-\x7E]+$/;

/** Why a sent Idempotency-Key is refused (400), or null when it is a usable key. */
export function invalidIdempotencyKey(key: string): string | null {
  if (key.length === 0) return 'The Idempotency-Key header is empty';
  if (key.length > IDEMPOTENCY_KEY_MAX)
    return `The Idempotency-Key header is longer than ${IDEMPOTENCY_KEY_MAX} characters (a UUID is a good key)`;
  if (!PRINTABLE_ASCII.test(key))
    return 'The Idempotency-Key header must be printable ASCII (a UUID is a good key)';
  return null;
}

/** What identifies "the same request" for a key. */
export interface CallShape {
  method: string;
  /** Path and query as forwarded. */
  url: string;
  /** The media type without parameters (`application/json`, `multipart/form-data`), or ''. */
  mediaType: string;
  /** The body bytes when buffered (every body but an upload's), or null for a streamed upload. */
  body: Buffer | null;
  /** The declared length of a streamed upload (null: chunked). */
  contentLength: string | null;
}

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/**
 * A JSON body as the service will read it, in one spelling: parsed, then written out by RFC 8785
 * (JSON Canonicalization Scheme: members sorted, no whitespace, numbers and strings in one form),
 * so a client that serialises the same object again (another key order, other whitespace, `1.0`
 * for `1`, an escaped character) retries the same request. Parsing first also settles what the
 * service settles the same way (a repeated member: the last one). A body that does not parse is
 * compared as bytes (the service refuses it anyway).
 */
function canonicalJson(body: Buffer): string | Buffer {
  try {
    return canonicalize(JSON.parse(body.toString('utf8'))) ?? body;
  } catch {
    return body;
  }
}

/**
 * SHA-256 over method, path and query, media type and the body: a JSON body in its canonical
 * form (see `canonicalJson`), any other body byte for byte. A streamed upload is not hashed
 * (that would mean buffering up to 25 MiB before forwarding): its fingerprint takes its declared
 * Content-Length instead, and not the multipart boundary, which client libraries draw anew on
 * every attempt. Only calls that carry a key are fingerprinted.
 */
export function fingerprint(call: CallShape): string {
  const hash = createHash('sha256');
  hash.update(`${call.method}\n${call.url}\n${call.mediaType}\n`);
  if (call.body) hash.update(isJson(call.mediaType) ? canonicalJson(call.body) : call.body);
  else hash.update(`streamed; length ${call.contentLength ?? 'chunked'}`);
  return hash.digest('hex');
}
