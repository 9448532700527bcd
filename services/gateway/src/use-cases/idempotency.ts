import { createHash } from 'node:crypto';

/** The methods an Idempotency-Key applies to (GET, HEAD and DELETE are idempotent by themselves). */
export const takesIdempotencyKey = (method: string) => method === 'POST' || method === 'PATCH';

/** Longest Idempotency-Key accepted (Stripe's limit; a UUID is 36). */
export const IDEMPOTENCY_KEY_MAX = 255;
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
  /** The body bytes when buffered (JSON), or null for a streamed upload. */
  body: Buffer | null;
  /** The declared length of a streamed upload (null: chunked). */
  contentLength: string | null;
}

/**
 * SHA-256 over method, path and query, media type and the body bytes (compared byte for byte:
 * a retry sends the very bytes again). A streamed upload is not hashed (that would mean buffering
 * up to 25 MiB before forwarding): its fingerprint takes its declared Content-Length instead, and
 * not the multipart boundary, which client libraries draw anew on every attempt.
 */
export function fingerprint(call: CallShape): string {
  const hash = createHash('sha256');
  hash.update(`${call.method}\n${call.url}\n${call.mediaType}\n`);
  if (call.body) hash.update(call.body);
  else hash.update(`streamed; length ${call.contentLength ?? 'chunked'}`);
  return hash.digest('hex');
}
