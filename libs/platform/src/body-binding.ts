import { createHash, randomBytes } from 'node:crypto';
import { Transform } from 'node:stream';

/*
 * How the gateway's assertion binds the body of the call it names, so that an assertion seen on
 * its way (an internal hop in clear, a log) cannot carry another body within its few seconds:
 *
 * - A body the gateway has read whole (JSON, forms, SCIM: everything but uploads) is bound by
 *   its SHA-256 (claim `bd`, base64url); the service hashes the bytes as its parser reads them and
 *   refuses the call (401) at the end of the body when they differ, before any handler runs. A
 *   call without a body is bound to the empty body.
 * - An upload is streamed through the gateway as it arrives (never buffered, so the gateway
 *   cannot know its digest before it sends the headers): its assertion carries a one-time id
 *   (claim `jti`) instead, which the service spends in its database (an insert with a unique
 *   `_id`, atomic on MongoDB and FerretDB alike, so across replicas too) before reading the body.
 *   A second use of the same assertion is refused.
 */

/** The digest an assertion names for a body: SHA-256 of its exact bytes, base64url. */
export const bodyDigest = (body?: Uint8Array | string | null): string =>
  createHash('sha256')
    .update(body ?? '')
    .digest('base64url');

export const EMPTY_BODY_DIGEST = bodyDigest();

/** What a signer is told about the body of the call it binds. */
export interface BodyOfCall {
  /** The bytes forwarded (absent: no body). */
  body?: Uint8Array | string | null;
  /** Forwarded while it is read (an upload): bound by a one-time id instead of a digest. */
  streamed?: boolean;
}

/** The claim that binds the body: `bd` (digest) or `jti` (one-time id, streamed bodies). */
export function bodyClaim(call: BodyOfCall): { bd: string } | { jti: string } {
  if (call.streamed) return { jti: randomBytes(16).toString('base64url') };
  return { bd: call.body?.length ? bodyDigest(call.body) : EMPTY_BODY_DIGEST };
}

/** The same claim as JSON members (`"bd":"…"`), for the gateway's hand-built claims text. */
export const bodyClaimJson = (call: BodyOfCall): string => JSON.stringify(bodyClaim(call)).slice(1, -1);

/**
 * The body as the parser reads it, hashed on the way; at its end, `refused()` instead of the end
 * when the bytes are not the ones the assertion names (nothing is buffered here).
 */
export function verifiedBody(payload: NodeJS.ReadableStream, expected: string, refused: () => Error) {
  const hash = createHash('sha256');
  const verifier = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      callback(hash.digest('base64url') === expected ? null : refused());
    },
  });
  // A body no parser reads (an unsupported type: 415) may still end here: its refusal then has
  // no reader, and must not become an uncaught error. A reader gets it through its own listener.
  verifier.on('error', () => undefined);
  payload.on('error', (err: Error) => verifier.destroy(err));
  return payload.pipe(verifier);
}
