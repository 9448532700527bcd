import type { NatsNames } from '@support-desk/contracts';
import { decodeJson, type Logger, type NatsConnection } from '@support-desk/platform';

/**
 * Every replica hears the `system.config_changed` events on the events subject (a plain
 * subscription beside the stream: nothing is consumed or acknowledged) and forgets the groups
 * they name, so the group names it keeps for user views follow another replica's rename or
 * deletion as soon as that replica's outbox publishes it.
 */
export function forgetChangedGroups(
  nc: NatsConnection,
  names: NatsNames,
  forget: (groupId: string) => void,
  logger: Logger,
): { stop(): void } {
  const sub = nc.subscribe(names.eventSubject('system.config_changed'), {
    callback: (err, msg) => {
      if (err) {
        logger.warn({ err }, 'group change subscription failed; names expire on their own');
        return;
      }
      try {
        const { resourceId } = decodeJson<{ resourceId?: unknown }>(msg.data);
        if (typeof resourceId === 'string' && resourceId.startsWith('grp_')) forget(resourceId);
      } catch {
        // Not an event this reader understands: audit dead-letters it; nothing to forget here.
      }
    },
  });
  return { stop: () => sub.unsubscribe() };
}
