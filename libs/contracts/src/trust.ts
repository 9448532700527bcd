/**
 * The services of Support Desk, and what each may use over NATS. deploy/nats.conf gives each
 * service's NATS user the same.
 */
export const SERVICE_NAMES = ['gateway', 'identity', 'requests', 'audit', 'webhooks'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export const isServiceName = (value: string): value is ServiceName =>
  (SERVICE_NAMES as readonly string[]).includes(value);

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
