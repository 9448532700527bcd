import { createInterface } from 'node:readline';
import { natsNames } from '@support-desk/contracts';
import {
  type Connection,
  connectMongo,
  createLogger,
  createOutboxRelay,
  ensureIndexes,
  natsConnectOptions,
  type OutboxRelay,
  serviceSigner,
  useStoreLocks,
} from '@support-desk/platform';
import { connect } from '@nats-io/transport-node';
import { identityDeps } from '../composition.js';
import { loadIdentityConfig } from '../config.js';
import { outboxModels } from '../store/index.js';
import { UsageError } from './args.js';
import { runBatch } from './batch.js';
import type { CliNats } from './command.js';
import { actingContext } from './commands.js';
import { completionScript } from './completion.js';
import { confirmOrRefuse, printError, printResult } from './output.js';
import { CliUsageError, type Globals, type Invocation, parseCommandLine } from './program.js';
import { cliIo, type CliIo, withCliIo } from './io.js';
import { runSeeder } from './seed.js';

/*
 * deskctl: the admin CLI. Talks to the identity database and NATS directly (same defaults as
 * the service), runs the same use cases, so every change emits the same events (source `cli`).
 * Exit codes: 0 ok, 1 runtime error, 2 usage error (see program.ts for the command line).
 */
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
  nats: CliNats | null;
  relay: OutboxRelay | null;
  close(): Promise<void>;
}

async function openSession(): Promise<Session> {
  const config = loadIdentityConfig(cliIo().env);
  // deskctl writes the same aggregates as the identity replicas do.
  useStoreLocks(config.STORE_WRITE_LOCKS);
  const logger = createLogger({ service: 'deskctl', level: 'silent' });
  const conn: Connection = await connectMongo({
    url: config.MONGO_URL,
    dbName: config.MONGO_DB,
    serverSelectionTimeoutMS: 5000,
  });
  let nats: CliNats | null = null;
  const close = async () => {
    await nats?.nc.close().catch(() => undefined);
    await conn.close().catch(() => undefined);
  };
  try {
    const names = natsNames(config.NATS_NAMESPACE);
    try {
      // deskctl is identity on NATS: its user, its inbox prefix and its key.
      const signer = serviceSigner('identity', config);
      const nc = await connect({
        ...natsConnectOptions(config.NATS_URL),
        name: 'deskctl',
        inboxPrefix: '_INBOX_identity',
        timeout: 3000,
      });
      nats = { nc, signer };
    } catch (err) {
      nats = null;
      cliIo().stderr.write(
        `deskctl: warning: NATS unavailable (${(err as Error).message}); events stay in the outbox until the identity service relays them\n`,
      );
    }
    const deps = identityDeps({ config, conn, names, logger });
    // Published here when NATS answers; else the running service's relay scan publishes them.
    const relay = nats
      ? createOutboxRelay({ nc: nats.nc, models: outboxModels(conn), logger, signer: nats.signer })
      : null;
    // Indexes are the service's to create at start; deskctl creates them only on a database the
    // service has not prepared yet (a first bootstrap), instead of on every run.
    const prepared = await conn.db
      ?.collection('users')
      .indexExists('emailKey_1')
      .catch(() => false);
    if (!prepared) await ensureIndexes(conn);
    return { deps, nats, relay, close };
  } catch (err) {
    await close();
    throw err;
  }
}

type RunInvocation = Extract<Invocation, { kind: 'run' }>;

/** A destructive command is confirmed (or refused) before anything is connected to. */
async function confirmed({ command, values, positionals, globals }: RunInvocation) {
  if (command.confirm) await confirmOrRefuse(command.confirm(values, positionals), globals);
}

async function runParsed(session: Session, { name, command, values, positionals, globals }: RunInvocation) {
  try {
    const ctx = await actingContext(session.deps, globals.as);
    return await command.run(session.deps, ctx, values, positionals, session.nats);
  } catch (err) {
    // A flag's value the command refuses: the hint names this command's --help.
    if (err instanceof UsageError && !(err instanceof CliUsageError))
      throw new CliUsageError(err.message, name);
    throw err;
  }
}

/** `deskctl batch`: commands from standard input, one JSON answer line each (see batch.ts). */
async function batch(): Promise<number> {
  const session = await openSession();
  try {
    // Publishing while the commands write: a key revoked in a batch is refused at once, not at its end.
    session.relay?.start();
    const { failed } = await runBatch(
      createInterface({ input: cliIo().stdin, crlfDelay: Infinity }),
      async (args) => {
        const parsed = await parseCommandLine(args);
        if (parsed.kind === 'help') return { usage: parsed.text };
        if (parsed.kind !== 'run') throw new UsageError(`"${args[0]}" cannot run in a batch`);
        await confirmed(parsed);
        return (await runParsed(session, parsed)).json;
      },
      (answer) => cliIo().stdout.write(`${JSON.stringify(answer)}\n`),
    );
    await flushOutbox(session.relay);
    return failed === 0 ? 0 : 1;
  } finally {
    await session.close();
  }
}

async function run(invocation: RunInvocation): Promise<number> {
  await confirmed(invocation);
  const session = await openSession();
  try {
    const result = await runParsed(session, invocation);
    await flushOutbox(session.relay);
    printResult(result, invocation.globals);
    return result.exitCode ?? 0;
  } finally {
    await session.close();
  }
}

async function main(argv: string[]): Promise<number> {
  let globals: Globals | null = null;
  try {
    const invocation = await parseCommandLine(argv);
    switch (invocation.kind) {
      case 'help':
        (invocation.exitCode === 0 ? cliIo().stdout : cliIo().stderr).write(invocation.text);
        return invocation.exitCode;
      case 'completion':
        cliIo().stdout.write(completionScript(invocation.shell));
        return 0;
      case 'seed':
        return await runSeeder(invocation.args, invocation.globals);
      case 'batch':
        globals = invocation.globals;
        return await batch();
      case 'run':
        globals = invocation.globals;
        return await run(invocation);
    }
  } catch (err) {
    return printError(err, globals, argv);
  }
}

/**
 * One deskctl run: `argv` as the command line gives it, with the process's streams and environment
 * (the bin), or with a caller's `io` (tests run commands in their own process, several at once).
 * Returns the exit code; never exits the process.
 */
export function runDeskctl(argv: string[], io?: CliIo): Promise<number> {
  const run = () => main(argv).catch((err: unknown) => printError(err, null, argv));
  return io ? withCliIo(io, run) : run();
}
