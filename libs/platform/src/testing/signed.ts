import { jetstream } from '@nats-io/jetstream';
import {
  type DomainEvent,
  EVENT_PRODUCERS,
  type EventType,
  mayPublishEvent,
  type NatsNames,
  type ServiceName,
} from '@support-desk/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { MessageSigner, MessageVerifier } from '../message-signing.js';
import { encodeJson } from '../nats.js';
import { serviceSigner, serviceVerifier } from '../service-keys.js';

/**
 * The services' keys in tests: the development key file, which the services composed by a test
 * (their configuration names no key) and the end-to-end stacks use as well.
 */
const DEVELOPMENT = { NODE_ENV: 'test' };

const signers = new Map<ServiceName, MessageSigner>();
let verifier: MessageVerifier | undefined;

/** Signs as `service` would (a test playing that service on NATS). */
export function testSigner(service: ServiceName): MessageSigner {
  if (!signers.has(service)) signers.set(service, serviceSigner(service, DEVELOPMENT));
  return signers.get(service)!;
}

/** Verifies as every service composed by a test does. */
export const testVerifier = (): MessageVerifier => (verifier ??= serviceVerifier(DEVELOPMENT));

/** The service that publishes events of this type about this resource (identity if none may). */
export const producerOf = (type: string, resourceId = ''): ServiceName =>
  EVENT_PRODUCERS.find((p) => mayPublishEvent(p.service, type, resourceId))?.service ?? 'identity';

/**
 * Publishes `data` on the events stream (or any stream subject), signed as `as` would sign it:
 * what a service's outbox relay sends.
 */
export async function publishSigned(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array | string,
  { as, msgID }: { as: ServiceName; msgID?: string },
) {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  return jetstream(nc).publish(subject, bytes, {
    headers: testSigner(as).sign(subject, bytes),
    ...(msgID ? { msgID } : {}),
  });
}

/**
 * Publishes a domain event (any version's: its type may be one this release does not know) on
 * its type's subject, signed by its producer (or `as`), keyed by its id.
 */
export const publishEvent = (
  nc: NatsConnection,
  names: NatsNames,
  event: DomainEvent | Record<string, unknown>,
  as: ServiceName = producerOf(String(event.type), String(event.resourceId)),
) =>
  publishSigned(nc, names.eventSubject(event.type as EventType), encodeJson(event), {
    as,
    msgID: String(event.id),
  });
