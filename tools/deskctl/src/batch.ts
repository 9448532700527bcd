import { isAppError } from '@support-desk/platform/core';
import { UsageError } from './args.js';

/**
 * `deskctl batch`: many commands in one process. A script that provisions dozens of users and keys
 * (the demo seeder) otherwise pays a whole process start (loading the service's modules, connecting
 * to the database and NATS) for each command, most of a second of CPU each. Commands come one per
 * line on standard input as a JSON array of arguments, run one after the other, and each gets its
 * answer line on standard output as soon as it is done (so a script can use one answer's ids in its
 * next command): `{"ok":true,"result":<what --json prints>}` or `{"ok":false,"error":"...","usage":bool}`.
 */
export const MAX_BATCH_COMMANDS = 10_000;
/** A line longer than this is not a command (the longest real ones are a few hundred bytes). */
const MAX_LINE_CHARS = 64 * 1024;

export type BatchAnswer = { ok: true; result: unknown } | { ok: false; error: string; usage: boolean };

/** Parses one input line into deskctl arguments, refusing what a batch cannot run. */
export function batchArguments(line: string): string[] {
  if (line.length > MAX_LINE_CHARS)
    throw new UsageError(`a line is longer than ${MAX_LINE_CHARS} characters`);
  let argv: unknown;
  try {
    argv = JSON.parse(line);
  } catch {
    throw new UsageError('each line must be a JSON array of arguments, e.g. ["groups","list"]');
  }
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string'))
    throw new UsageError('each line must be a non-empty JSON array of strings');
  if (argv[0] === 'batch') throw new UsageError('a batch cannot contain another batch');
  // Standard input is the command stream: a password cannot come from it.
  if (argv.includes('--password-stdin'))
    throw new UsageError('--password-stdin cannot be used in a batch (standard input carries the commands)');
  return argv as string[];
}

function answerOf(err: unknown): BatchAnswer {
  if (err instanceof UsageError) return { ok: false, error: err.message, usage: true };
  const message = isAppError(err) ? err.message : ((err as Error)?.message ?? String(err));
  return { ok: false, error: message, usage: false };
}

/**
 * Runs every line of `lines` (blank lines skipped, at most MAX_BATCH_COMMANDS) with `run`, which
 * returns what `--json` would print, and writes one answer per command. Returns the failure count.
 */
export async function runBatch(
  lines: AsyncIterable<string>,
  run: (argv: string[]) => Promise<unknown>,
  write: (answer: BatchAnswer) => void,
): Promise<{ commands: number; failed: number }> {
  let commands = 0;
  let failed = 0;
  for await (const raw of lines) {
    const line = raw.trim();
    if (line === '') continue;
    if (commands >= MAX_BATCH_COMMANDS) {
      write({ ok: false, error: `a batch runs at most ${MAX_BATCH_COMMANDS} commands`, usage: true });
      failed++;
      break;
    }
    commands++;
    try {
      write({ ok: true, result: await run(batchArguments(line)) });
    } catch (err) {
      failed++;
      write(answerOf(err));
    }
  }
  return { commands, failed };
}
