import { createInterface } from 'node:readline/promises';
import { styleText } from 'node:util';
import { UsageError } from './args.js';
import { cliIo } from './io.js';
import type { CommandResult, Table } from './command.js';
import { CliUsageError, type Globals } from './program.js';

/**
 * How deskctl prints: results on stdout (a table or text by default, JSON with --output json),
 * errors on stderr (one line, or one JSON object with --output json). Colour only on a terminal,
 * never with --no-color or under NO_COLOR (https://no-color.org: set and not empty); FORCE_COLOR
 * (set and not 0) asks for it without a terminal, as most CLIs honour it.
 */
export function colourOn(stream: { isTTY?: boolean }, globals: Pick<Globals, 'color'> | null): boolean {
  const env = cliIo().env;
  if (env.NO_COLOR || globals?.color === false) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** Node's own styling when colour is on (`colourOn` has already decided for the stream). */
const paint = (on: boolean, style: 'bold' | 'red') => (s: string) =>
  on ? styleText(style, s, { validateStream: false }) : s;

/** Columns padded to their widest cell, a header row of capitals first (as kubectl and gh print). */
export function renderTable(table: Table, colour: boolean): string {
  const bold = paint(colour, 'bold');
  const header = table.columns.map((c) => c.toUpperCase());
  const widths = header.map((h, i) => Math.max(h.length, ...table.rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [bold(line(header)), ...table.rows.map(line)].join('\n');
}

export function printResult(result: CommandResult, globals: Globals): void {
  let text: string;
  if (globals.output === 'json') text = JSON.stringify(result.json, null, 2);
  else if (result.table && result.table.rows.length > 0)
    text = renderTable(result.table, colourOn(cliIo().stdout, globals));
  else text = result.text;
  cliIo().stdout.write(`${text}\n`);
  if (result.note && globals.output !== 'json') cliIo().stderr.write(`${result.note}\n`);
}

/**
 * An error's exit code (2 usage, 1 anything else), its code and its message. A usage error is
 * described without the platform; any other comes from a run, which has loaded it already.
 */
export async function describeError(err: unknown) {
  if (err instanceof UsageError) {
    const path = err instanceof CliUsageError && err.commandPath ? `${err.commandPath} ` : '';
    return {
      exitCode: 2,
      code: 'USAGE_ERROR',
      message: err.message,
      hint: `Run 'deskctl ${path}--help' for usage.`,
    };
  }
  const { isAppError } = await import('@support-desk/platform/core');
  if (isAppError(err)) return { exitCode: 1, code: err.code, message: err.message };
  return { exitCode: 1, code: 'ERROR', message: (err as Error)?.message ?? String(err) };
}

/** Prints the error on stderr and returns the exit code. `globals` is null when parsing failed. */
export async function printError(err: unknown, globals: Globals | null, argv: string[]): Promise<number> {
  const e = await describeError(err);
  // A line that failed to parse still asked for JSON errors if it said so.
  const json = globals ? globals.output === 'json' : argv.includes('--json') || outputFlag(argv) === 'json';
  if (json) {
    cliIo().stderr.write(`${JSON.stringify({ error: e })}\n`);
  } else {
    const red = paint(colourOn(cliIo().stderr, globals ?? { color: !argv.includes('--no-color') }), 'red');
    cliIo().stderr.write(`deskctl: ${red('error:')} ${e.message}\n${e.hint ? `${e.hint}\n` : ''}`);
  }
  return e.exitCode;
}

const outputFlag = (argv: string[]) => {
  const i = argv.findIndex((a) => a === '--output' || a === '-o');
  if (i >= 0) return argv[i + 1] ?? '';
  return argv.find((a) => a.startsWith('--output='))?.slice('--output='.length) ?? '';
};

/**
 * A destructive command asks first on a terminal; `--yes` skips the question. Without a terminal
 * (a script, a pipe, CI) and without --yes it is refused: a script must say it means it.
 */
export async function confirmOrRefuse(what: string, globals: Globals): Promise<void> {
  if (globals.yes) return;
  const io = cliIo();
  if (!io.stdin.isTTY || !io.stderr.isTTY)
    throw new UsageError(`${what}: refusing without confirmation (no terminal to ask on); add --yes`);
  const rl = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream });
  try {
    const answer = await rl.question(`${what}. Continue? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new Error('cancelled: nothing was changed');
  } finally {
    rl.close();
  }
}
