import type { NatsNames } from '@support-desk/contracts';
import type { Logger } from '@support-desk/platform/core';
import {
  domainEventReader,
  type MessageVerifier,
  type NatsConnection,
  signatureOf,
} from '@support-desk/platform/messaging';

/**
 * Every replica hears the `system.config_changed` events on the events subject (a plain
 * subscription beside the stream: nothing is consumed or acknowledged; the intake's durable
 * consumer gives each event to one replica only) and forgets the subscriptions they name, so the
 * copies the delivery worker keeps follow another replica's change (disabled, a new URL, a
 * rotated secret) as soon as that replica's outbox publishes it. Only events the stream's
 * consumers would take count (signed by a service that may publish them, on their own subject).
 */
export function forgetChangedSubscriptions(
  nc: NatsConnection,
  names: NatsNames,
  verifier: MessageVerifier,
  forget: (webhookId: string) => void,
  logger: Logger,
): { stop(): void } {
  const read = domainEventReader(names, verifier);
  const sub = nc.subscribe(names.eventSubject('system.config_changed'), {
    callback: (err, msg) => {
      if (err) {
        logger.warn({ err }, 'subscription change notices failed; copies expire on their own');
        return;
      }
      try {
        const { resourceId } = read(msg.data, msg.subject, signatureOf(msg.headers) ?? null);
        if (resourceId.startsWith('whk_')) forget(resourceId);
      } catch {
        // Not an event this reader takes: the intake dead-letters it; nothing to forget here.
      }
    },
  });
  return { stop: () => sub.unsubscribe() };
}
