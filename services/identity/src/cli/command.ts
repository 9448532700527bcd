import type { NatsConnection } from '@support-desk/platform';
import type { Deps, EventContext } from '../use-cases/deps.js';
import { type Options, UsageError } from './args.js';

export interface CommandResult {
  /** Machine-readable result (printed with --json). */
  json: unknown;
  /** Human-readable lines. */
  text: string;
  /** When not 0: the command ran, its result is printed, and it still reports a failure (1). */
  exitCode?: number;
}

/** One deskctl command: its usage line, its options, and what it runs (the same use cases as the API). */
export interface Command {
  usage: string;
  options: Options;
  positionals?: number;
  run(
    deps: Deps,
    ctx: EventContext,
    values: Record<string, unknown>,
    positionals: string[],
    /** The NATS connection, null when NATS did not answer (commands that need it say so). */
    nc: NatsConnection | null,
  ): Promise<CommandResult>;
}

export const oneOf = <T extends string>(
  value: unknown,
  allowed: readonly T[],
  name: string,
): T | undefined => {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
};
