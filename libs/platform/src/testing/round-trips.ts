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

/** One command a client sent: its name (`find`, `aggregate`, …) and its document. */
export interface SentCommand {
  name: string;
  command: Record<string, unknown>;
}

/**
 * The commands `operation` sends over `conn` (from `testCountedMongo`: command monitoring on,
 * else this throws rather than see none), in order, and what it returned. The readiness checks'
 * background `ping`s are left out. A count (`countDocuments`) is an `aggregate` whose pipeline
 * starts with its `$match`.
 */
export async function commandsOf<T>(
  conn: Connection,
  operation: () => Promise<T>,
): Promise<{ result: T; commands: SentCommand[] }> {
  const client = conn.getClient();
  if (!client.options.monitorCommands)
    throw new Error('commandsOf needs a connection from testCountedMongo (command monitoring on)');
  const commands: SentCommand[] = [];
  // The readiness checks ping the store in the background (health.ts): not the operation's.
  const watch = (e: mongo.CommandStartedEvent) => {
    if (e.commandName !== 'ping') commands.push({ name: e.commandName, command: e.command });
  };
  client.on('commandStarted', watch);
  try {
    return { result: await operation(), commands };
  } finally {
    client.off('commandStarted', watch);
  }
}

/**
 * Counts what the code under test asks of the store (through `conn`, from `testCountedMongo`)
 * and of NATS (through `nc`). Counting real commands on the real servers, not calls into a
 * repository, is what says how many times a request waits on the network.
 */
export function roundTripCounter(conn: Connection, nc?: NatsConnection): RoundTripCounter {
  if (!conn.getClient().options.monitorCommands)
    throw new Error('roundTripCounter needs a connection from testCountedMongo (command monitoring on)');
  return {
    async measure(operation) {
      const sentBefore = nc?.stats().outMsgs ?? 0;
      const { result, commands } = await commandsOf(conn, operation);
      const storeCommands = commands.map(({ name, command }) => {
        const collection = command[name];
        return typeof collection === 'string' ? `${name} ${collection}` : name;
      });
      return {
        result,
        trips: { store: storeCommands.length, storeCommands, nats: (nc?.stats().outMsgs ?? 0) - sentBefore },
      };
    },
  };
}
