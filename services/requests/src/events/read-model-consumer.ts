import type { NatsNames, ReceivedEvent } from '@support-desk/contracts';
import {
  type DeadLetter,
  type DomainEventReader,
  type ReplayedSignature,
  type NatsConnection,
  type RunningConsumer,
  runConsumer,
} from '@support-desk/platform/messaging';
import type { Logger } from '@support-desk/platform/core';

/** Users events that change what this service shows or checks (login/logout do not). */
const USER_EVENTS = new Set<string>([
  'user.created',
  'user.updated',
  'user.role_changed',
  'user.deactivated',
]);

export interface ReadModelConsumerOptions {
  nc: NatsConnection;
  names: NatsNames;
  logger: Logger;
  /** Prefix of the durable consumer names (`<durable>-users`, `<durable>-groups`). */
  durable: string;
  /** Refreshes what this service knows of a user or group (asks identity for its current state). */
  refreshUser: (id: string) => Promise<unknown>;
  refreshGroup: (id: string) => Promise<unknown>;
  /** The events stream's reader (signature, subject and producer checked). */
  read: DomainEventReader;
  deadLetter: (record: DeadLetter) => Promise<void>;
}

type Refreshers = Pick<ReadModelConsumerOptions, 'refreshUser' | 'refreshGroup' | 'read'>;

/** What one event changes in the read model (the same for a delivery and a replay). */
function applyEvent(opts: Refreshers, event: ReceivedEvent): Promise<unknown> | undefined {
  if (USER_EVENTS.has(event.type)) return opts.refreshUser(event.resourceId);
  // Other settings concern other services.
  if (event.type === 'system.config_changed' && event.resourceId.startsWith('grp_')) {
    return opts.refreshGroup(event.resourceId);
  }
  return undefined;
}

/** Replays one of the read model's dead letters (`deskctl dead-letters replay --service requests`). */
export const replayReadModelEvent =
  (opts: Refreshers) => async (data: Uint8Array, subject: string, signature: ReplayedSignature) => {
    await applyEvent(opts, opts.read(data, subject, signature));
  };

/**
 * Keeps the users/groups read model current. Identity's events carry what changed, not the
 * whole record, so each one triggers a refresh of that user or group from identity (RPC):
 * replays and reordering are harmless because the refresh always stores the current state.
 * Group changes (including membership) arrive as system.config_changed on a grp_ resource.
 *
 * Two durable consumers with one filter subject each: the NATS servers we support (2.9) do
 * not accept several filter subjects on one consumer.
 */
export async function startReadModelConsumer(opts: ReadModelConsumerOptions): Promise<RunningConsumer> {
  const common = {
    nc: opts.nc,
    logger: opts.logger,
    stream: opts.names.eventsStream,
    decode: opts.read,
    deadLetter: opts.deadLetter,
    concurrency: 8,
  };
  const users = await runConsumer<ReceivedEvent>({
    ...common,
    durable: `${opts.durable}-users`,
    filterSubjects: [`${opts.names.namespace}.events.user.>`],
    handle: async (event) => {
      await applyEvent(opts, event);
    },
  });
  const groups = await runConsumer<ReceivedEvent>({
    ...common,
    durable: `${opts.durable}-groups`,
    filterSubjects: [opts.names.eventSubject('system.config_changed')],
    handle: async (event) => {
      await applyEvent(opts, event);
    },
  });
  const stats = users.stats;
  return {
    get stats() {
      return {
        acked: stats.acked + groups.stats.acked,
        nacked: stats.nacked + groups.stats.nacked,
        deadLettered: stats.deadLettered + groups.stats.deadLettered,
      };
    },
    async stop() {
      await Promise.all([users.stop(), groups.stop()]);
    },
  } as RunningConsumer;
}
