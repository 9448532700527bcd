import type { IdentityRpcName } from './internal.js';

/**
 * The trust model between the services over NATS (docs/security.md). Every message one service
 * sends another (a domain event, a credential notice, a request) is signed with the sender's own
 * Ed25519 key; a receiver verifies the signature against the sender's public key and accepts the
 * message only when this table lets that sender send it. deploy/nats.conf gives each service's
 * NATS user the same subjects, so the server refuses the rest before any receiver sees it.
 */
export const SERVICE_NAMES = ['gateway', 'identity', 'requests', 'audit', 'webhooks'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export const isServiceName = (value: string): value is ServiceName =>
  (SERVICE_NAMES as readonly string[]).includes(value);

/**
 * Who may publish which domain events. A type ending in `.*` is every type of that resource,
 * those a later release adds included (a reader of this release still knows who may publish
 * them). `resourceIdPrefix` narrows a producer to resources of one kind: the webhooks service
 * announces changes of webhook subscriptions only, never of groups or settings.
 */
export interface EventProducer {
  service: ServiceName;
  types: readonly string[];
  resourceIdPrefix?: string;
}

export const EVENT_PRODUCERS: readonly EventProducer[] = [
  { service: 'identity', types: ['user.*', 'system.config_changed', 'system.sync_completed'] },
  { service: 'requests', types: ['request.*', 'system.sla_warning', 'system.sla_breach'] },
  { service: 'webhooks', types: ['system.config_changed'], resourceIdPrefix: 'whk_' },
  { service: 'requests', types: ['system.config_changed'], resourceIdPrefix: 'slp_' },
];

const typeMatches = (pattern: string, type: string) =>
  pattern.endsWith('.*') ? type.startsWith(pattern.slice(0, -1)) && !type.endsWith('.') : pattern === type;

/** Whether `service` may publish an event of `type` about `resourceId`. */
export function mayPublishEvent(service: string, type: string, resourceId: string): boolean {
  return EVENT_PRODUCERS.some(
    (p) =>
      p.service === service &&
      p.types.some((pattern) => typeMatches(pattern, type)) &&
      (p.resourceIdPrefix === undefined || resourceId.startsWith(p.resourceIdPrefix)),
  );
}

/** Who may ask each of identity's request-reply operations. */
export const IDENTITY_RPC_CALLERS: Record<IdentityRpcName, readonly ServiceName[]> = {
  resolveApiKey: ['gateway'],
  getUser: ['gateway', 'requests'],
  getGroup: ['requests'],
  getOAuthClient: ['gateway'],
  getSettings: ['gateway'],
};

/**
 * Who may make operator requests (dead letters, webhook subscriptions): deskctl and the settings
 * console, which both run as identity.
 */
export const OPERATOR_CALLERS: readonly ServiceName[] = ['identity'];

/** Who may publish credential notices. */
export const NOTICE_PRODUCERS: readonly ServiceName[] = ['identity'];

/**
 * The JetStream streams each service uses (it publishes to them, or reads them): it waits for
 * them at start, and may read nothing else of JetStream's (deploy/nats.conf). Streams are made
 * by an operator step (`provision-streams`), never by a service.
 */
export const SERVICE_STREAMS: Record<ServiceName, readonly ('events' | 'notices')[]> = {
  gateway: ['notices'],
  identity: ['events', 'notices'],
  requests: ['events'],
  audit: ['events'],
  webhooks: ['events'],
};

/**
 * The headers of a signed message. `Sd-Signature` is `v1:` and the base64url Ed25519 signature
 * of the text `sd-nats-v1`, the subject, the signer and the signing time (ms since the epoch),
 * each followed by a line feed, then the message's bytes: a signature is bound to its subject,
 * so a message moved to another subject no longer verifies. A receiver refuses a version it does
 * not know (it cannot check it), so a new scheme is added beside `v1`, never in its place.
 */
export const SIGNER_HEADER = 'Sd-Signer';
export const SIGNED_AT_HEADER = 'Sd-Signed-At';
export const SIGNATURE_HEADER = 'Sd-Signature';
export const SIGNATURE_SCHEME = 'v1';
