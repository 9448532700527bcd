import type { NatsNames } from '@support-desk/contracts';
import {
  domainEventReader,
  type MessageVerifier,
  type NatsConnection,
  signatureOf,
} from '@support-desk/platform/messaging';
import type { Logger } from '@support-desk/platform/core';

/**
 * Every replica hears the `system.config_changed` events on the events subject (a plain
 * subscription beside the stream: nothing is consumed or acknowledged) and forgets the groups
 * they name, so the group names it keeps for user views follow another replica's rename or
 * deletion as soon as that replica's outbox publishes it. Only events the stream's consumers
 * would take count (signed by a service that may publish them, on their own subject).
 */
export function forgetChangedGroups(
  nc: NatsConnection,
  names: NatsNames,
  verifier: MessageVerifier,
  forget: (groupId: string) => void,
  logger: Logger,
): { stop(): void } {
  const read = domainEventReader(names, verifier);
  const sub = nc.subscribe(names.eventSubject('system.config_changed'), {
    callback: (err, msg) => {
      if (err) {
        logger.warn({ err }, 'group change subscription failed; names expire on their own');
        return;
      }
      try {
        const { resourceId } = read(msg.data, msg.subject, signatureOf(msg.headers) ?? null);
        if (resourceId.startsWith('grp_')) forget(resourceId);
      } catch {
        // Not an event this reader takes: audit dead-letters it; nothing to forget here.
      }
    },
  });
  return { stop: () => sub.unsubscribe() };
}
