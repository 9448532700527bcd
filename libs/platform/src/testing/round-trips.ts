import type { Connection, mongo } from 'mongoose';
import { connectMongo } from '../mongo.js';
import type { NatsConnection } from '../nats.js';
import { type Teardownable, testEnv, uniqueName } from './env.js';

/** The round trips one operation made: store commands on a connection, NATS messages sent. */
export interface RoundTrips {
  /** Commands the store received (`find`, `update`, `insert`, `count`, `getMore`, ...). */
  store: number;
  /** Each of them as `command collection`, in order (e.g. `find requests`). */
  storeCommands: string[];
  /** Messages the NATS connection sent (publishes and requests; acks count too). */
  nats: number;
}

export interface RoundTripCounter {
  /**
   * Runs `operation` and reports the round trips made while it ran. Work the operation leaves
   * to the background (the outbox relay publishing, a consumer) is counted only if it happens
   * before `operation` settles: pause it for an exact count of the call itself.
   */
  measure<T>(operation: () => Promise<T>): Promise<{ result: T; trips: RoundTrips }>;
}

/**
 * A connection to a fresh database whose commands can be counted (the driver's command
 * monitoring is on: `roundTripCounter` listens to it), dropped at teardown.
 */
export async function testCountedMongo(t: Teardownable, prefix = 'test'): Promise<Connection> {
  const url = new URL(testEnv.mongoUrl);
  url.searchParams.set('monitorCommands', 'true');
  const conn = await connectMongo({ url: url.toString(), dbName: uniqueName(`${prefix}_`) });
  t.teardown(async () => {
    await conn.dropDatabase().catch(() => undefined);
    await conn.close();
  });
  return conn;
}

/**
 * Counts what the code under test asks of the store (through `conn`, from `testCountedMongo`)
 * and of NATS (through `nc`). Counting real commands on the real servers, not calls into a
 * repository, is what says how many times a request waits on the network.
 */
export function roundTripCounter(conn: Connection, nc?: NatsConnection): RoundTripCounter {
  const client = conn.getClient();
  if (!client.options.monitorCommands)
    throw new Error('roundTripCounter needs a connection from testCountedMongo (command monitoring on)');
  return {
    async measure(operation) {
      const storeCommands: string[] = [];
      const onCommand = (event: mongo.CommandStartedEvent) => {
        // The readiness checks ping the store in the background (health.ts): not
        // a round trip of the operation measured.
        if (event.commandName === 'ping') return;
        const collection = event.command[event.commandName];
        storeCommands.push(
          typeof collection === 'string' ? `${event.commandName} ${collection}` : event.commandName,
        );
      };
      client.on('commandStarted', onCommand);
      const sentBefore = nc?.stats().outMsgs ?? 0;
      try {
        const result = await operation();
        return {
          result,
          trips: {
            store: storeCommands.length,
            storeCommands,
            nats: (nc?.stats().outMsgs ?? 0) - sentBefore,
          },
        };
      } finally {
        client.off('commandStarted', onCommand);
      }
    },
  };
}
