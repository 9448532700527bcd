import { type KeyObject, sign as signBytes, verify as verifyBytes } from 'node:crypto';
import {
  isServiceName,
  type ServiceName,
  SIGNATURE_HEADER,
  SIGNATURE_SCHEME,
  SIGNED_AT_HEADER,
  SIGNER_HEADER,
} from '@support-desk/contracts';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/**
 * Messages between services are signed by the sending service (its own Ed25519 key) and verified
 * by the receiver against that service's public key: what a service accepts comes from the
 * service that signed it, whoever could publish on NATS. The signature covers the subject (a
 * message moved to another subject no longer verifies), the signer and the time (requests are
 * refused when stale); the format is in contracts (`SIGNATURE_HEADER`).
 */
export class UnauthenticatedMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnauthenticatedMessageError';
  }
}

/** A message's signature headers as stored beside it (a dead letter keeps them for its replay). */
export interface MessageSignature {
  signer: string;
  signedAt: string;
  signature: string;
}

export interface MessageSigner {
  readonly service: ServiceName;
  /** `headers` (new ones when absent) with this service's signature of the message added. */
  sign(subject: string, data: Uint8Array, headers?: MsgHdrs): MsgHdrs;
}

export interface VerifyOptions {
  /** Refuse a signature older than this (requests); stored messages (events) have no bound. */
  maxAgeMs?: number;
  /** The clock (tests); default `Date.now`. */
  now?: number;
}

/**
 * Who sent a message with no signature at all while an upgrade from a release that did not sign
 * is under way (`ACCEPT_UNSIGNED_UNTIL`): nobody can tell which service it was.
 */
export const EARLIER_RELEASE = 'an earlier release (unsigned)';
export type Sender = ServiceName | typeof EARLIER_RELEASE;

/** Whether `sender` may send what `allowed` lists (an earlier release's message passes). */
export const sentByOneOf = (sender: Sender, allowed: readonly ServiceName[]) =>
  sender === EARLIER_RELEASE || allowed.includes(sender);

export interface MessageVerifier {
  /** The service that signed this very message, or `UnauthenticatedMessageError`. */
  sender(
    subject: string,
    data: Uint8Array,
    signature: MessageSignature | undefined,
    options?: VerifyOptions,
  ): Sender;
}

/** How far ahead of the receiver's clock a sender's clock may be. */
const CLOCK_TOLERANCE_MS = 5000;
const encoder = new TextEncoder();

const signingInput = (subject: string, signer: string, signedAt: string, data: Uint8Array) =>
  Buffer.concat([encoder.encode(`sd-nats-${SIGNATURE_SCHEME}\n${subject}\n${signer}\n${signedAt}\n`), data]);

export function messageSigner(service: ServiceName, key: KeyObject): MessageSigner {
  return {
    service,
    sign(subject, data, headers = natsHeaders()) {
      const signedAt = String(Date.now());
      const signature = signBytes(null, signingInput(subject, service, signedAt, data), key);
      headers.set(SIGNER_HEADER, service);
      headers.set(SIGNED_AT_HEADER, signedAt);
      headers.set(SIGNATURE_HEADER, `${SIGNATURE_SCHEME}:${signature.toString('base64url')}`);
      return headers;
    },
  };
}

/** The signature headers of a received message, if it has all three. */
export function signatureOf(headers: MsgHdrs | undefined): MessageSignature | undefined {
  const signer = headers?.get(SIGNER_HEADER);
  const signedAt = headers?.get(SIGNED_AT_HEADER);
  const signature = headers?.get(SIGNATURE_HEADER);
  return signer && signedAt && signature ? { signer, signedAt, signature } : undefined;
}

/**
 * Verifies with the public keys of each service (several during a key rotation). Until
 * `acceptUnsignedUntil` (ms since the epoch; an upgrade window), a message with no signature at
 * all is taken as one from the earlier release; a message with a signature is always checked.
 */
export function messageVerifier(
  keys: Partial<Record<ServiceName, KeyObject[]>>,
  { acceptUnsignedUntil }: { acceptUnsignedUntil?: number } = {},
): MessageVerifier {
  return {
    sender(subject, data, signature, { maxAgeMs, now = Date.now() } = {}) {
      if (!signature) {
        if (acceptUnsignedUntil !== undefined && now < acceptUnsignedUntil) return EARLIER_RELEASE;
        throw new UnauthenticatedMessageError('unsigned message');
      }
      const { signer, signedAt } = signature;
      if (!isServiceName(signer)) throw new UnauthenticatedMessageError(`unknown signer "${signer}"`);
      const [scheme, value] = signature.signature.split(':', 2);
      if (scheme !== SIGNATURE_SCHEME || !value)
        throw new UnauthenticatedMessageError(`signature scheme "${scheme}" is not one this release checks`);
      const at = Number(signedAt);
      if (!/^\d{1,16}$/.test(signedAt)) throw new UnauthenticatedMessageError('malformed signing time');
      if (maxAgeMs !== undefined && (at < now - maxAgeMs || at > now + CLOCK_TOLERANCE_MS))
        throw new UnauthenticatedMessageError(`signed at ${new Date(at).toISOString()}: stale`);
      const input = signingInput(subject, signer, signedAt, data);
      const bytes = Buffer.from(value, 'base64url');
      if (!(keys[signer] ?? []).some((key) => verifyBytes(null, input, key, bytes)))
        throw new UnauthenticatedMessageError(`not signed by ${signer}'s key`);
      return signer;
    },
  };
}
