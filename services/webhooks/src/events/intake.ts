import type { NatsNames, ReceivedEvent } from '@support-desk/contracts';
import {
  deadLetterStore,
  type DomainEventReader,
  type NatsConnection,
  runConsumer,
} from '@support-desk/platform/messaging';
import type { Logger } from '@support-desk/platform/core';
import type { Connection } from 'mongoose';

export interface IntakeOptions {
  nc: NatsConnection;
  conn: Connection;
  names: NatsNames;
  logger: Logger;
  durable: string;
  maxDeliver: number;
  /** The events stream's reader (signature, subject and producer checked). */
  read: DomainEventReader;
  /**
   * Records the deliveries an event makes (idempotent: the same event again changes nothing), with
   * the event's sequence in the stream.
   */
  handle: (event: ReceivedEvent, streamSeq: number) => Promise<void>;
  backoffMs?: number[];
}

/**
 * Every domain event from JetStream, through this service's own durable consumer (replicas share
 * it): decoded by the one decoder (poison → dead letter), handed to the fan-out, acked once its
 * deliveries are stored. Attempts happen later, in the delivery worker: a slow receiver never
 * holds the stream.
 */
export async function startIntake(opts: IntakeOptions) {
  const log = opts.logger.child({ component: 'intake' });
  const consumer = await runConsumer<ReceivedEvent>({
    nc: opts.nc,
    logger: log,
    stream: opts.names.eventsStream,
    durable: opts.durable,
    filterSubjects: [opts.names.eventsWildcard],
    decode: opts.read,
    handle: (event, meta) => opts.handle(event, meta.streamSequence),
    deadLetter: deadLetterStore(opts.conn).write,
    concurrency: 16,
    maxDeliver: opts.maxDeliver,
    ...(opts.backoffMs ? { backoffMs: opts.backoffMs } : {}),
  });
  log.info({ durable: opts.durable }, 'intake started');
  return { stats: () => consumer.stats, stop: () => consumer.stop() };
}

export type Intake = Awaited<ReturnType<typeof startIntake>>;
