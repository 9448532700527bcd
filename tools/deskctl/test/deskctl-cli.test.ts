import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { COMMANDS } from '../src/commands.js';
import { DESKCTL, deskctlProcess } from './helpers.js';

// The command line itself (issue 19): help, version, usage errors and exit codes, and shell
// completion, through the real deskctl process, none of which reaches a database. The commands
// against a store are in deskctl-cli-directory.test.ts and deskctl-cli-credentials.test.ts.

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
/** No database is reached by these (parsing, help and completion come before any connection). */
const offline = (args: string[], env: Record<string, string> = {}) =>
  deskctlProcess({ MONGO_URL: 'mongodb://127.0.0.1:9', NATS_URL: 'nats://127.0.0.1:9', ...env }, args);

t.test('help, version, usage errors and their exit codes', async (t) => {
  const help = await offline(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: deskctl /);
  for (const group of [
    'users',
    'groups',
    'api-keys',
    'oauth-clients',
    'settings',
    'idp',
    'webhooks',
    'completion',
    'seed',
  ])
    t.match(help.stdout, new RegExp(`\\n  ${group}\\b`), `lists ${group}`);
  t.match(help.stdout, /Exit codes: 0 ok, 1 runtime error .*, 2 usage error/);

  const create = await offline(['users', 'create', '--help']);
  t.equal(create.code, 0);
  for (const flag of [
    '--email <EMAIL>',
    '--name <NAME>',
    '--role <admin|agent|viewer>',
    '--if-not-exists',
    '--json',
    '--yes',
  ])
    t.match(
      create.stdout,
      new RegExp(`\\n  (-\\w, )?${flag.replace(/[|<>]/g, '\\$&')} +\\S`),
      `${flag} has a description`,
    );
  t.match(create.stdout, /Examples:\n {2}\$ deskctl users create --email /);
  t.notMatch(create.stdout, /--if-missing/, 'the old name is accepted but not advertised');

  const group = await offline(['help', 'api-keys']);
  t.equal(group.code, 0);
  t.match(group.stdout, /create .*\n.*list .*\n.*revoke <ID>/s);

  for (const flag of ['--version', '-V']) {
    const v = await offline([flag]);
    t.equal(v.code, 0);
    t.equal(v.stdout.trim(), VERSION, `${flag} prints the version`);
  }

  const none = await offline([]);
  t.equal(none.code, 2, 'no command: usage on stderr, exit 2');
  t.match(none.stderr, /^Usage: deskctl/);

  const cases: [string[], RegExp, string][] = [
    [['frobnicate'], /unknown command 'frobnicate'/, ''],
    [['users', 'create', '--bogus'], /unknown option '--bogus'/, 'users create '],
    [['users', 'show'], /missing required argument 'USER'/, 'users show '],
    [['api-keys', 'revoke', 'a', 'b'], /too many arguments/, 'api-keys revoke '],
    // A global flag's mistake points to the global help, where the flag is described.
    [['users', 'list', '--output', 'yaml'], /--output.*yaml.*invalid|Allowed choices/i, ''],
    [['completion', 'fish'], /unknown shell "fish"/, 'completion '],
  ];
  for (const [args, message, path] of cases) {
    const r = await offline(args);
    t.equal(r.code, 2, `${args.join(' ')}: exit 2`);
    t.equal(r.stdout, '', 'nothing on stdout');
    const lines = r.stderr.trimEnd().split('\n');
    t.equal(lines.length, 2, `${args.join(' ')}: one line and a hint, not the whole usage`);
    t.match(lines[0], /^deskctl: error: /);
    t.match(lines[0], message);
    t.equal(lines[1], `Run 'deskctl ${path}--help' for usage.`);
  }

  // Global flags anywhere; errors as JSON under --json.
  for (const args of [
    ['--json', 'users', 'show'],
    ['users', '--json', 'show'],
    ['users', 'show', '-o', 'json'],
  ]) {
    const r = await offline(args);
    t.equal(r.code, 2);
    t.equal(r.stdout, '');
    t.same(JSON.parse(r.stderr), {
      error: {
        exitCode: 2,
        code: 'USAGE_ERROR',
        message: "missing required argument 'USER'",
        hint: "Run 'deskctl users show --help' for usage.",
      },
    });
  }
});

t.test('help, completion and usage errors load neither the store, NATS, HTTP nor the schemas', async (t) => {
  // What a deskctl process loaded, told by a preloaded hook (heavy-modules.ts).
  const watch = fileURLToPath(new URL('./heavy-modules.js', import.meta.url));
  const loadedBy = (args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', watch, DESKCTL, ...args], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        MONGO_URL: 'mongodb://127.0.0.1:9',
        NATS_URL: 'nats://127.0.0.1:9',
      },
      timeout: 30_000,
    });
    const line = /heavy modules: (.*)\n/.exec(r.stderr);
    t.ok(line, `${args.join(' ')}: the hook reported (${r.stderr})`);
    return { code: r.status, heavy: JSON.parse(line?.[1] ?? 'null') as string[] | null };
  };
  for (const [args, code] of [
    [['--help'], 0],
    [['users', 'create', '--help'], 0],
    [['completion', 'bash'], 0],
    [['users', 'create', '--bogus'], 2],
    [['nonsense'], 2],
    [['api-keys', 'revoke', 'key_1'], 2], // refused without --yes and a terminal, before connecting
  ] as const) {
    const r = loadedBy([...args]);
    t.equal(r.code, code, `${args.join(' ')} exits ${code}`);
    t.same(r.heavy, [], `${args.join(' ')} loads no heavy library`);
  }
  // The hook does see them: a command that runs loads the store's library (and fails to connect).
  const runs = loadedBy(['users', 'list']);
  t.equal(runs.code, 1, 'users list against no store fails at run time');
  t.ok(runs.heavy?.includes('mongoose'), `a command that runs loads mongoose (${runs.heavy})`);
});

t.test('every command of the table has something to run', async (t) => {
  for (const [name, command] of Object.entries(COMMANDS))
    t.type(await command.load(), 'function', `${name} loads its run`);
});

t.test('completion scripts for bash and zsh', async (t) => {
  const bash = await offline(['completion', 'bash']);
  t.equal(bash.code, 0);
  t.match(bash.stdout, /complete -F _deskctl deskctl/);
  // Completed by a real bash: the words it offers after what was typed.
  const complete = (...typed: string[]) => {
    const words = ['deskctl', ...typed].map((w) => `'${w}'`).join(' ');
    const r = spawnSync(
      'bash',
      [
        '-c',
        `${bash.stdout}\nCOMP_WORDS=(${words}); COMP_CWORD=${typed.length}; _deskctl; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8', timeout: 10_000 },
    );
    t.equal(r.status, 0, r.stderr);
    return r.stdout.trim().split('\n').filter(Boolean).sort();
  };
  t.same(complete('us'), ['users']);
  t.same(complete('users', ''), ['create', 'deactivate', 'link', 'list', 'set-password', 'show', 'update']);
  t.same(complete('groups', 'add'), ['add-member']);
  t.same(complete('settings', 'ip-allowlist', 's'), ['set', 'show']);
  t.same(complete('users', 'create', '--if'), ['--if-not-exists']);
  t.ok(complete('api-keys', 'list', '--').includes('--owner'), 'the command flags');
  t.ok(complete('api-keys', 'list', '--').includes('--json'), 'and the global ones');
  t.same(complete('completion', ''), ['bash', 'zsh']);
  t.same(complete('webhooks', ''), [
    'create',
    'delete',
    'deliveries',
    'list',
    'listen',
    'ping',
    'replay',
    'rotate-secret',
    'show',
    'trigger',
    'update',
  ]);
  t.ok(complete('webhooks', 'create', '--').includes('--if-not-exists'), 'webhooks create --if-not-exists');
  t.same(complete('sla-policies', ''), ['create', 'delete', 'list', 'show', 'update']);
  t.ok(complete('sla-policies', 'create', '--').includes('--file'), 'sla-policies create --file');
  t.same(complete('requests', ''), ['deleted', 'restore']);
  t.same(complete('jobs', ''), ['show']);
  t.same(complete('sl'), ['sla-policies']);

  const zsh = await offline(['completion', 'zsh']);
  t.equal(zsh.code, 0);
  t.match(zsh.stdout, /^#compdef deskctl\n/);
  // Run by a real zsh, as its completion system runs it: with `words` and `CURRENT` set. Outside
  // a completion widget zsh has no `_describe`, so a stand-in prints the candidates it is given
  // ("word:description"); narrowing them to what was typed is zsh's matching, done here by prefix.
  const zshComplete = (...typed: string[]) => {
    const words = ['deskctl', ...typed].map((w) => `'${w}'`).join(' ');
    const r = spawnSync(
      'zsh',
      [
        '-f',
        '-c',
        `_describe() { print -rl -- "\${(@P)2}"; }\nwords=(${words}); CURRENT=${typed.length + 1}\n${zsh.stdout}`,
      ],
      { encoding: 'utf8', timeout: 10_000 },
    );
    t.equal(r.status, 0, r.stderr);
    const current = typed[typed.length - 1];
    return r.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => ({ word: line.split(/(?<!\\):/)[0].replace(/\\:/g, ':'), line }))
      .filter(({ word }) => word.startsWith(current));
  };
  const zshWords = (...typed: string[]) =>
    zshComplete(...typed)
      .map(({ word }) => word)
      .sort();
  t.same(zshWords('us'), ['users']);
  t.same(zshWords('users', ''), ['create', 'deactivate', 'link', 'list', 'set-password', 'show', 'update']);
  t.same(zshWords('groups', 'add'), ['add-member']);
  t.same(zshWords('users', 'create', '--if'), ['--if-not-exists']);
  t.ok(zshWords('api-keys', 'list', '--').includes('--owner'), 'the command flags (zsh)');
  t.ok(zshWords('api-keys', 'list', '--').includes('--json'), 'and the global ones (zsh)');
  t.ok(
    zshComplete('users', '').some(({ line }) => line.startsWith('list:list users')),
    'each candidate with what it does',
  );
});
