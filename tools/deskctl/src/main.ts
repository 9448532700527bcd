import { createInterface } from 'node:readline';
import type { AdminSession } from '@support-desk/identity/admin';
import { UsageError } from './args.js';
import { completionScript } from './completion.js';
import { cliIo, type CliIo, withCliIo } from './io.js';
import { confirmOrRefuse, printError, printResult } from './output.js';
import { CliUsageError, type Globals, type Invocation, parseCommandLine } from './program.js';
import { runSeeder } from './seed.js';

/*
 * deskctl: the admin CLI. Talks to the identity database and NATS directly (same defaults as
 * the service) through identity's admin entry, runs the same use cases, so every change emits the
 * same events (source `cli`). Help, completion and usage errors load none of that: the session
 * (session.ts) and a command's code (run/) are imported only when a command runs.
 * Exit codes: 0 ok, 1 runtime error, 2 usage error (see program.ts for the command line).
 */

type RunInvocation = Extract<Invocation, { kind: 'run' }>;

/** A destructive command is confirmed (or refused) before anything is connected to. */
async function confirmed({ command, values, positionals, globals }: RunInvocation) {
  if (command.confirm) await confirmOrRefuse(command.confirm(values, positionals), globals);
}

async function runParsed(session: AdminSession, invocation: RunInvocation) {
  const { name, command, values, positionals, globals } = invocation;
  try {
    const { actingContext } = await import('./session.js');
    const ctx = await actingContext(session.deps, globals.as);
    const run = await command.load();
    return await run(session.deps, ctx, values, positionals, session.nats, globals);
  } catch (err) {
    // A flag's value the command refuses: the hint names this command's --help.
    if (err instanceof UsageError && !(err instanceof CliUsageError))
      throw new CliUsageError(err.message, name);
    throw err;
  }
}

async function openSession() {
  const { openSession: open } = await import('./session.js');
  return open();
}

/** `deskctl batch`: commands from standard input, one JSON answer line each (see batch.ts). */
async function batch(): Promise<number> {
  const { runBatch } = await import('./batch.js');
  const session = await openSession();
  try {
    // Publishing while the commands write: a key revoked in a batch is refused at once, not at its end.
    session.startRelay();
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
    await session.flush();
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
    await session.flush();
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
