import type { AdminNats, Deps, EventContext } from '@support-desk/identity/admin';
import { UsageError } from './args.js';

/** What `--output table` prints for a list: one header row, then aligned rows. */
export interface Table {
  columns: string[];
  rows: string[][];
}

export interface CommandResult {
  /** Machine-readable result (printed with --output json / --json). */
  json: unknown;
  /** Human-readable lines (the default output of a command that is not a list). */
  text: string;
  /** A list's rows: the default output when present (`text` is then what an empty list says). */
  table?: Table;
  /**
   * A line for the person reading, not part of the result (a list's "Showing 1–20 of 56 — next:
   * --page 2"): printed on standard error, never with --output json.
   */
  note?: string;
  /** When not 0: the command ran, its result is printed, and it still reports a failure (1). */
  exitCode?: number;
}

/** One flag of a command: its kind, what it is for (shown by --help), and its value's name. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  description: string;
  /** Repeatable (`--redirect-uri A --redirect-uri B`): the value is a string array. */
  multiple?: boolean;
  /** The value's placeholder in help (default: the flag's name in capitals). */
  value?: string;
  /** Listed in --help as an alias of another flag, kept for scripts written against it. */
  hidden?: boolean;
}

export type Options = Record<string, OptionSpec>;

/** One positional argument. */
export interface ArgSpec {
  name: string;
  description: string;
  /** Required arguments are checked by the parser (exit 2) before any connection is made. */
  required?: boolean;
}

/**
 * One deskctl command as the command table has it: its help, its flags and its confirmation,
 * all the parser and completion need. What it runs is loaded only when it runs (`load`).
 */
export interface CommandSpec {
  description: string;
  options: Options;
  args?: ArgSpec[];
  /** Shown under "Examples:" in `deskctl <command> --help`. */
  examples: string[];
  /**
   * A destructive command: what it is about to do, asked on a terminal before it runs (`--yes`
   * skips the question; with no terminal and no --yes the command is refused, exit 2).
   */
  confirm?(values: Record<string, unknown>, positionals: string[]): string;
  /** A list: how its rows are called and paged (list-command.ts). */
  list?: ListPaging;
}

/** How a list pages: what one and several rows are called (help, footer), rows a page and at most. */
export interface ListPaging {
  noun: [one: string, several: string];
  defaultLimit: number;
  maxLimit: number;
}

/** What a command runs (the same use cases as the API), in a module of run/ loaded when it runs. */
export type Run = (
  deps: Deps,
  ctx: EventContext,
  values: Record<string, unknown>,
  positionals: string[],
  /** NATS, null when it did not answer (commands that need it say so). */
  nats: CliNats | null,
  /** The global flags, for a command that prints as it runs (`webhooks listen`). */
  globals?: { output: 'table' | 'json' },
) => Promise<CommandResult>;

/** A run/ module: the runs of one area's commands, by command name. */
export interface RunModule {
  runs: Record<string, Run>;
}

/** A command of the table: its spec and the loader of what it runs. */
export interface Command extends CommandSpec {
  load(): Promise<Run>;
}

/** deskctl on NATS: its connection, and identity's key, which signs what it asks of the services. */
export type CliNats = AdminNats;

export const oneOf = <T extends string>(
  value: unknown,
  allowed: readonly T[],
  name: string,
): T | undefined => {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
};

/** `--if-not-exists` (and its older name `--if-missing`, kept for scripts): create unless it exists. */
export const IF_NOT_EXISTS: Options = {
  'if-not-exists': {
    type: 'boolean',
    description: 'succeed without change when it already exists (for scripts that run twice)',
  },
  'if-missing': { type: 'boolean', description: 'older name of --if-not-exists', hidden: true },
};
export const ifNotExists = (v: Record<string, unknown>) =>
  v['if-not-exists'] === true || v['if-missing'] === true;

/** A time in a table: to the second, `-` when there is none. */
export const when = (iso: string | null | undefined) => (iso ? iso.replace(/\.\d{3}Z$/, 'Z') : '-');
