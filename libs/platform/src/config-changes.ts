import type { NatsNames } from '@support-desk/contracts';
import type { Logger } from './logger.js';
import { domainEventReader } from './event-decoder.js';
import { type MessageVerifier, signatureOf } from './message-signing.js';
import type { NatsConnection } from './nats.js';

/**
 * Every replica hears the `system.config_changed` events on the events subject (a plain
 * subscription beside the stream: nothing is consumed or acknowledged, where a durable consumer
 * gives each event to one replica only) and forgets the resources they name whose id starts with
 * `prefix`, so what a replica keeps in memory follows another replica's change as soon as that
 * replica's outbox publishes it. Only events the stream's consumers would take count (signed by a
 * service that may publish them, on their own subject). `what` names the copies in the log.
 */
export function forgetOnConfigChanges(opts: {
  nc: NatsConnection;
  names: NatsNames;
  verifier: MessageVerifier;
  prefix: string;
  forget: (id: string) => void;
  logger: Logger;
  what: string;
}): { stop(): void } {
  const read = domainEventReader(opts.names, opts.verifier);
  const sub = opts.nc.subscribe(opts.names.eventSubject('system.config_changed'), {
    callback: (err, msg) => {
      if (err) {
        opts.logger.warn({ err }, `config change notices failed; ${opts.what} expire on their own`);
        return;
      }
      try {
        const { resourceId } = read(msg.data, msg.subject, signatureOf(msg.headers) ?? null);
        if (resourceId.startsWith(opts.prefix)) opts.forget(resourceId);
      } catch {
        // Not an event this reader takes: the consumers dead-letter it; nothing to forget here.
      }
    },
  });
  return { stop: () => sub.unsubscribe() };
}
