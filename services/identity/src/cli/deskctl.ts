#!/usr/bin/env node
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

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help' || argv[0] === '-h') {
    if (argv.length === 0) {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const found = findCommand(argv);
  if (!found)
    throw new UsageError(
      `unknown command: ${argv
        .filter((a) => !a.startsWith('-'))
        .slice(0, 3)
        .join(' ')}`,
    );
  const { values, positionals } = parse(found.rest, found.command.options, found.command.positionals ?? 0);
  if (values.help) {
    process.stdout.write(`usage: deskctl ${found.command.usage} [--json] [--as ADMIN_EMAIL]\n`);
    return 0;
  }
  const json = values.json === true;
  const config = loadIdentityConfig();
  // deskctl writes the same aggregates as the identity replicas do.
  useStoreLocks(config.STORE_WRITE_LOCKS);
  const logger = createLogger({ service: 'deskctl', level: 'silent' });
  let conn: Connection | undefined;
  let nc: NatsConnection | null = null;
  try {
    conn = await connectMongo({
      url: config.MONGO_URL,
      dbName: config.MONGO_DB,
      serverSelectionTimeoutMS: 5000,
    });
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
    const ctx = await actingContext(deps, values.as);
    const result = await found.command.run(deps, ctx, values, positionals, nc);
    await flushOutbox(relay);
    process.stdout.write(json ? `${JSON.stringify(result.json, null, 2)}\n` : `${result.text}\n`);
    return 0;
  } finally {
    await nc?.close().catch(() => undefined);
    await conn?.close().catch(() => undefined);
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
