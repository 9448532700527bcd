#!/usr/bin/env node
import { createInterface } from 'node:readline';
import { natsNames } from '@support-desk/contracts';
import {
  type Connection,
  connectMongo,
  createLogger,
  createOutboxRelay,
  ensureIndexes,
  ensureStreams,
  isAppError,
  type NatsConnection,
  type OutboxRelay,
  useStoreLocks,
} from '@support-desk/platform';
import { connect } from '@nats-io/transport-node';
import { identityDeps } from '../composition.js';
import { loadIdentityConfig } from '../config.js';
import { outboxModels } from '../store/index.js';
import { UsageError } from './args.js';
import { runBatch } from './batch.js';
import { actingContext, COMMANDS, findCommand, parse } from './commands.js';

/**
 * deskctl: the admin CLI. Talks to the identity database and NATS directly (same defaults as
 * the service), runs the same use cases, so every change emits the same events (source `cli`).
 * Exit codes: 0 ok, 1 error (message on stderr), 2 usage.
 */
const USAGE = `usage: deskctl <command> [options] [--json] [--as ADMIN_EMAIL]

commands:
${Object.values(COMMANDS)
  .map((c) => `  deskctl ${c.usage}`)
  .join('\n')}
  deskctl batch   (commands on standard input, one JSON array of arguments per line; one JSON answer line each)

--json prints machine-readable output. --as names the acting admin recorded in events
(default: the built-in "deskctl" actor).`;

async function flushOutbox(relay: OutboxRelay | null) {
  if (!relay) return;
  relay.start();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([relay.idle(), new Promise((r) => (timer = setTimeout(r, 5000)))]);
  clearTimeout(timer);
  await relay.stop();
}

/** One database and NATS connection with the use cases on them: what every command runs against. */
interface Session {
  deps: ReturnType<typeof identityDeps>;
  nc: NatsConnection | null;
  relay: OutboxRelay | null;
  close(): Promise<void>;
}

async function openSession(): Promise<Session> {
  const config = loadIdentityConfig();
  // deskctl writes the same aggregates as the identity replicas do.
  useStoreLocks(config.STORE_WRITE_LOCKS);
  const logger = createLogger({ service: 'deskctl', level: 'silent' });
  const conn: Connection = await connectMongo({
    url: config.MONGO_URL,
    dbName: config.MONGO_DB,
    serverSelectionTimeoutMS: 5000,
  });
  let nc: NatsConnection | null = null;
  const close = async () => {
    await nc?.close().catch(() => undefined);
    await conn.close().catch(() => undefined);
  };
  try {
    const names = natsNames(config.NATS_NAMESPACE);
    try {
      nc = await connect({ servers: config.NATS_URL, name: 'deskctl', timeout: 3000 });
      await ensureStreams(nc, names);
    } catch (err) {
      nc = null;
      process.stderr.write(
        `deskctl: warning: NATS unavailable (${(err as Error).message}); events stay in the outbox until the identity service relays them\n`,
      );
    }
    const deps = identityDeps({ config, conn, names, logger });
    // Published here when NATS answers; else the running service's relay scan publishes them.
    const relay = nc ? createOutboxRelay({ nc, models: outboxModels(conn), logger }) : null;
    // Indexes are the service's to create at start; deskctl creates them only on a database the
    // service has not prepared yet (a first bootstrap), instead of on every run.
    const prepared = await conn.db
      ?.collection('users')
      .indexExists('emailKey_1')
      .catch(() => false);
    if (!prepared) await ensureIndexes(conn);
    return { deps, nc, relay, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A command and its parsed options: usage errors surface here, before any connection is made. */
function parseCommand(argv: string[]) {
  const found = findCommand(argv);
  if (!found)
    throw new UsageError(
      `unknown command: ${argv
        .filter((a) => !a.startsWith('-'))
        .slice(0, 3)
        .join(' ')}`,
    );
  const { values, positionals } = parse(found.rest, found.command.options, found.command.positionals ?? 0);
  return { command: found.command, values, positionals };
}

async function runParsed(
  session: Session,
  { command, values, positionals }: ReturnType<typeof parseCommand>,
) {
  const ctx = await actingContext(session.deps, values.as);
  return command.run(session.deps, ctx, values, positionals, session.nc);
}

/** `deskctl batch`: commands from standard input, one JSON answer line each (see batch.ts). */
async function batch(argv: string[]): Promise<number> {
  parse(argv, {}, 0);
  const session = await openSession();
  try {
    // Publishing while the commands write: a key revoked in a batch is refused at once, not at its end.
    session.relay?.start();
    const { failed } = await runBatch(
      createInterface({ input: process.stdin, crlfDelay: Infinity }),
      async (args) => {
        const parsed = parseCommand(args);
        if (parsed.values.help) return { usage: `deskctl ${parsed.command.usage}` };
        return (await runParsed(session, parsed)).json;
      },
      (answer) => process.stdout.write(`${JSON.stringify(answer)}\n`),
    );
    await flushOutbox(session.relay);
    return failed === 0 ? 0 : 1;
  } finally {
    await session.close();
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help' || argv[0] === '-h') {
    if (argv.length === 0) {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (argv[0] === 'batch') return batch(argv.slice(1));
  const parsed = parseCommand(argv);
  if (parsed.values.help) {
    process.stdout.write(`usage: deskctl ${parsed.command.usage} [--json] [--as ADMIN_EMAIL]\n`);
    return 0;
  }
  const session = await openSession();
  try {
    const result = await runParsed(session, parsed);
    await flushOutbox(session.relay);
    process.stdout.write(
      parsed.values.json === true ? `${JSON.stringify(result.json, null, 2)}\n` : `${result.text}\n`,
    );
    return result.exitCode ?? 0;
  } finally {
    await session.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`deskctl: ${err.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    const message = isAppError(err) ? err.message : ((err as Error)?.message ?? String(err));
    process.stderr.write(`deskctl: error: ${message}\n`);
    process.exit(1);
  },
);
