import { readFileSync } from 'node:fs';
import { Command as Commander, CommanderError, Option } from 'commander';
import { UsageError } from './args.js';
import type { Command, Options } from './command.js';
import { COMMANDS, GROUPS } from './commands.js';

/**
 * deskctl's command line, on commander (the most used Node CLI framework: maintained, typed, with
 * help, version, option and argument checking): one commander command per entry of COMMANDS, plus
 * `batch`, `completion` and `seed`. Parsing only decides what to run; main.ts runs it, so usage
 * errors surface before any connection is made.
 */
export type OutputFormat = 'table' | 'json';

/** The flags every command accepts, anywhere on the line. */
export interface Globals {
  output: OutputFormat;
  yes: boolean;
  color: boolean;
  as?: string;
}

export type Invocation =
  | {
      kind: 'run';
      name: string;
      command: Command;
      values: Record<string, unknown>;
      positionals: string[];
      globals: Globals;
    }
  | { kind: 'batch'; globals: Globals }
  | { kind: 'completion'; shell: 'bash' | 'zsh' }
  | { kind: 'seed'; args: string[]; globals: Globals }
  /** Help or version was asked for (exit 0), or a command group was named without a command (2). */
  | { kind: 'help'; text: string; exitCode: 0 | 2 };

/** A usage error, with the command whose --help the hint points to. */
export class CliUsageError extends UsageError {
  constructor(
    message: string,
    readonly commandPath: string,
  ) {
    super(message);
  }
}

export const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const globalOptions = () => [
  new Option(
    '-o, --output <format>',
    'output format: an aligned table (or text) for people, JSON for scripts',
  )
    .choices(['table', 'json'])
    .default('table'),
  new Option('--json', 'the same as --output json'),
  new Option('-y, --yes', 'do not ask before a destructive command (needed when there is no terminal)'),
  new Option('--no-color', 'no colour (colour is only ever used on a terminal, and never under NO_COLOR)'),
  new Option('--as <email>', 'the acting admin recorded in events (default: the built-in "deskctl" actor)'),
];

/** Every global flag (for completion). */
export const GLOBAL_FLAGS = ['--output', '--json', '--yes', '--no-color', '--as', '--help'];

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

function optionsOf(spec: Options): Option[] {
  return Object.entries(spec).map(([flag, o]) => {
    const placeholder = o.value ?? flag.toUpperCase().replace(/-/g, '_');
    const option = new Option(
      o.type === 'string' ? `--${flag} <${placeholder}>` : `--${flag}`,
      o.multiple ? `${o.description} (repeatable)` : o.description,
    );
    if (o.multiple) option.argParser(collect);
    if (o.hidden) option.hideHelp();
    return option;
  });
}

function globalsOf(cmd: Commander): Globals {
  const g = cmd.optsWithGlobals<{
    output: OutputFormat;
    json?: boolean;
    yes?: boolean;
    color: boolean;
    as?: string;
  }>();
  return {
    output: g.json ? 'json' : g.output,
    yes: g.yes === true,
    color: g.color,
    ...(g.as ? { as: g.as } : {}),
  };
}

const pathOf = (cmd: Commander): string => {
  const names: string[] = [];
  for (let c: Commander | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/** Every command reports its own usage errors (the hint names its --help) instead of exiting. */
function reportingErrors(cmd: Commander): Commander {
  return cmd.exitOverride((err) => {
    throw Object.assign(err, { commandPath: pathOf(cmd) });
  });
}

const examplesText = (examples: string[]) =>
  examples.length ? `\nExamples:\n${examples.map((e) => `  $ deskctl ${e}`).join('\n')}\n` : '';

/** The whole command tree; `found` receives what the parsed line asks for. */
export function buildProgram(found: (invocation: Invocation) => void, out: { out: string; err: string }) {
  const program = new Commander('deskctl')
    .description(
      'The Support Desk operator CLI: users, groups, API keys, OAuth clients, identity providers, webhooks and settings.\n' +
        'Runs the identity service use cases against its database and NATS, so every change emits the same events.',
    )
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .configureOutput({
      writeOut: (s) => (out.out += s),
      writeErr: (s) => (out.err += s),
      outputError: () => undefined,
    })
    .helpCommand('help [command]', 'show help for a command')
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 runtime error (the command failed), 2 usage error (nothing was done).\n' +
        "Run 'deskctl <command> --help' for a command's flags and examples.\n",
    );
  for (const option of globalOptions()) program.addOption(option);
  reportingErrors(program);

  const groups = new Map<string, Commander>([['', program]]);
  const groupOf = (words: string[]): Commander => {
    const key = words.join(' ');
    const existing = groups.get(key);
    if (existing) return existing;
    const parent = groupOf(words.slice(0, -1));
    const group = reportingErrors(parent.command(words.at(-1)!).description(GROUPS[key] ?? ''));
    groups.set(key, group);
    return group;
  };

  for (const [name, command] of Object.entries(COMMANDS)) {
    const words = name.split(' ');
    const cmd = reportingErrors(groupOf(words.slice(0, -1)).command(words.at(-1)!))
      .description(command.description)
      .addHelpText('after', examplesText(command.examples));
    for (const arg of command.args ?? [])
      cmd.argument(arg.required ? `<${arg.name}>` : `[${arg.name}]`, arg.description);
    for (const option of optionsOf(command.options)) cmd.addOption(option);
    cmd.action((...args: unknown[]) => {
      const self = args.at(-1) as Commander;
      const values: Record<string, unknown> = {};
      for (const option of self.options) {
        const value = self.getOptionValue(option.attributeName());
        if (value !== undefined) values[option.long!.slice(2)] = value;
      }
      const positionals = (self.processedArgs as (string | undefined)[]).filter((a): a is string => !!a);
      found({ kind: 'run', name, command, values, positionals, globals: globalsOf(self) });
    });
  }

  reportingErrors(program.command('batch'))
    .description(
      'run commands from standard input: one JSON array of arguments per line, one JSON answer line each',
    )
    .addHelpText(
      'after',
      examplesText([
        `batch <<'EOF'\n    ["groups","create","--name","Tier 1","--if-not-exists"]\n    ["groups","list"]\n  EOF`,
      ]),
    )
    .action((_o, self: Commander) => found({ kind: 'batch', globals: globalsOf(self) }));
  reportingErrors(program.command('completion'))
    .description(
      'print a shell completion script (bash: source it from ~/.bashrc; zsh: put it on $fpath as _deskctl)',
    )
    .argument('<shell>', 'bash or zsh')
    .addHelpText(
      'after',
      examplesText([
        'completion bash > ~/.local/share/bash-completion/completions/deskctl',
        'completion zsh > "${fpath[1]}/_deskctl"',
      ]),
    )
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh')
        throw new CliUsageError(`unknown shell "${shell}": bash or zsh`, 'completion');
      found({ kind: 'completion', shell });
    });
  reportingErrors(program.command('seed'))
    .description(
      'fill a running stack with the demo data set (runs the sd-seed tool, with a progress bar on a terminal)',
    )
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption(false)
    .argument(
      '[args...]',
      "the seeder's flags: --demo [--requests N] [--run-id ID] [--url GATEWAY_URL] (--help for more)",
    )
    .action((args: string[], _o, self: Commander) => found({ kind: 'seed', args, globals: globalsOf(self) }));
  return program;
}

/** What one command line asks for; usage errors throw CliUsageError. */
export async function parseCommandLine(given: string[]): Promise<Invocation> {
  // `deskctl help users create` is `deskctl users create --help` (commander's own help command
  // sends a group's help to stderr as if it were a usage error).
  const argv = given[0] === 'help' ? [...given.slice(1), '--help'] : given;
  let invocation: Invocation | null = null;
  const out = { out: '', err: '' };
  const program = buildProgram((i) => (invocation = i), out);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version')
      return { kind: 'help', text: out.out, exitCode: 0 };
    if (err.code === 'commander.help') return { kind: 'help', text: out.err || out.out, exitCode: 2 };
    const path = (err as CommanderError & { commandPath?: string }).commandPath ?? '';
    throw new CliUsageError(err.message.replace(/^error: /, ''), path);
  }
  if (!invocation) return { kind: 'help', text: program.helpInformation(), exitCode: 2 };
  return invocation;
}
