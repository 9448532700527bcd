import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { type ResolveApiKeyReply } from '@support-desk/contracts';
import { callRpc } from '@support-desk/platform';
import { freePort } from '@support-desk/platform/testing';
import t from 'tap';
import { cliContext } from '../src/use-cases/deps.js';
import { createUser } from '../src/use-cases/users.js';
import { deskctl, harness } from './helpers.js';
import { authorizeThroughForms, FormBrowser } from './oauth-flow.js';

// The command line itself (issue 19): help, version, usage errors and exit codes, output formats,
// colour, confirmation, completion. Through the real deskctl process; the commands that need a
// database run against the harness's (real MongoDB/FerretDB and NATS).

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
/** No database is reached by these (parsing, help and completion come before any connection). */
const offline = (args: string[], env: Record<string, string> = {}) =>
  deskctl({ MONGO_URL: 'mongodb://127.0.0.1:9', NATS_URL: 'nats://127.0.0.1:9', ...env }, args);
const ESC = '\u001b[';
const DESKCTL = fileURLToPath(new URL('../src/cli/deskctl.js', import.meta.url));
/** util-linux `script` gives a command a real terminal (a pty); absent, the terminal tests skip. */
const SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/**
 * Runs deskctl on a terminal; when it prints `prompt`, types `answer`. Returns what the terminal
 * showed and the exit code.
 */
function onTerminal(env: Record<string, string>, args: string[], answer?: string) {
  return new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    const command = [process.execPath, DESKCTL, ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    let answered = false;
    child.stdout.on('data', (d) => {
      screen += d;
      if (answer !== undefined && !answered && screen.includes('[y/N]')) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

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
  t.same(complete('users', ''), ['create', 'deactivate', 'list', 'set-password', 'show', 'update']);
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
    'ping',
    'replay',
    'rotate-secret',
    'show',
    'update',
  ]);
  t.ok(complete('webhooks', 'create', '--').includes('--if-not-exists'), 'webhooks create --if-not-exists');

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
  t.same(zshWords('users', ''), ['create', 'deactivate', 'list', 'set-password', 'show', 'update']);
  t.same(zshWords('groups', 'add'), ['add-member']);
  t.same(zshWords('users', 'create', '--if'), ['--if-not-exists']);
  t.ok(zshWords('api-keys', 'list', '--').includes('--owner'), 'the command flags (zsh)');
  t.ok(zshWords('api-keys', 'list', '--').includes('--json'), 'and the global ones (zsh)');
  t.ok(
    zshComplete('users', '').some(({ line }) => line.startsWith('list:list users')),
    'each candidate with what it does',
  );
});

t.test('commands against the store', async (t) => {
  // Listening, so a user can sign in and consent through the real forms (a live OAuth grant).
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const h = await harness(t, { OAUTH_ISSUER: issuer });
  await h.app.listen({ port, host: '127.0.0.1' });
  const run = (args: string[], env: Record<string, string> = {}) => deskctl({ ...h.cliEnv, ...env }, args);
  const json = async (args: string[]) => {
    const r = await run([...args, '--json']);
    t.equal(r.code, 0, `${args.slice(0, 2).join(' ')}: ${r.stderr}`);
    return r.json;
  };

  const boot = await json(['bootstrap', '--email', 'root@example.com', '--name', 'Root']);
  const ada = await json([
    'users',
    'create',
    '--email',
    'ada@example.com',
    '--name',
    'Ada',
    '--role',
    'agent',
  ]);

  await t.test('webhooks without a webhooks service: exit 1, one clear line', async (t) => {
    // No webhooks service answers on this test's namespace (the commands against a running one
    // are in test/e2e/test/webhooks.test.ts).
    const r = await run(['webhooks', 'list']);
    t.equal(r.code, 1);
    t.equal(
      r.stderr.trim(),
      "deskctl: error: The webhooks service is not answering; subscriptions can't be shown or changed right now",
    );
    const unconfirmed = await run(['webhooks', 'delete', 'whk_01jzzzzzzzzzzzzzzzzzzzzzzz']);
    t.equal(unconfirmed.code, 2, 'delete is destructive: refused without --yes and no terminal');
  });

  await t.test('--if-not-exists: a script can run twice', async (t) => {
    const again = await json([
      'users',
      'create',
      '--email',
      'ADA@example.com',
      '--name',
      'Other',
      '--role',
      'admin',
      '--if-not-exists',
    ]);
    t.match(again, { id: ada.id, name: 'Ada', role: 'agent', existed: true }, 'reported as it is, unchanged');
    const taken = await run('users create --email ada@example.com --name A --role agent'.split(' '));
    t.equal(taken.code, 1, 'without it a taken email is a runtime error');
    const g1 = await json(['groups', 'create', '--name', 'Tier 1', '--if-not-exists']);
    const g2 = await json(['groups', 'create', '--name', 'Tier 1', '--if-not-exists']);
    t.equal(g2.id, g1.id);
    t.equal(g2.existed, true);
    const ciKey = 'api-keys create --owner ada@example.com --name ci --scopes requests:read --if-not-exists';
    const k1 = await json(ciKey.split(' '));
    t.match(k1.key, /^sd_key_/);
    const k2 = await json(ciKey.split(' '));
    t.match(k2, { id: k1.id, existed: true });
    t.notOk('key' in k2, 'the value is never shown again');
  });

  await t.test('users list / show / update, groups add-member / remove-member', async (t) => {
    const list = await json(['users', 'list', '--role', 'agent']);
    t.same(
      list.users.map((u: { email: string }) => u.email),
      ['ada@example.com'],
    );
    t.match(list.pagination, { page: 1, limit: 20, total: 1 });
    const bad = await run(['users', 'list', '--role', 'boss']);
    t.equal(bad.code, 2, 'a bad filter is a usage error');

    t.match(await json(['users', 'show', 'ada@example.com']), {
      id: ada.id,
      email: 'ada@example.com',
      role: 'agent',
    });
    t.match(await json(['users', 'show', ada.id]), { id: ada.id });
    const missing = await run(['users', 'show', 'nobody@example.com', '--json']);
    t.equal(missing.code, 1, 'a refused command is a runtime error');
    t.match(JSON.parse(missing.stderr), { error: { exitCode: 1, code: 'NOT_FOUND' } });

    const updated = await json(['users', 'update', 'ada@example.com', '--name', 'Ada L', '--vip', 'true']);
    t.match(updated, { id: ada.id, name: 'Ada L', isVip: true });
    const ev = await h.waitForEvent((e) => e.type === 'user.updated' && e.resourceId === ada.id);
    t.equal(ev.metadata.source, 'cli');
    const nothing = await run(['users', 'update', 'ada@example.com']);
    t.equal(nothing.code, 2);
    t.match(nothing.stderr, /nothing to change/);
    t.match(nothing.stderr, /Run 'deskctl users update --help'/);
    const lastAdmin = await run(['users', 'update', 'root@example.com', '--role', 'agent']);
    t.equal(lastAdmin.code, 1, 'the same rules as the API: the last admin keeps the role');

    const added = await json(['groups', 'add-member', 'Tier 1', 'ada@example.com']);
    t.match(added, { name: 'Tier 1', memberCount: 1 });
    t.match(
      await json(['groups', 'add-member', added.id, ada.id]),
      { memberCount: 1 },
      'twice changes nothing',
    );
    t.match(await json(['users', 'show', ada.id]), { groups: [{ id: added.id, name: 'Tier 1' }] });
    t.match(await json(['groups', 'remove-member', 'Tier 1', 'ada@example.com']), { memberCount: 0 });
    const noGroup = await run(['groups', 'add-member', 'No such group', 'ada@example.com']);
    t.equal(noGroup.code, 1);
  });

  await t.test(
    'table by default, JSON on request; colour never without a terminal or under NO_COLOR',
    async (t) => {
      const table = await run(['users', 'list']);
      t.equal(table.code, 0, table.stderr);
      const lines = table.stdout.trimEnd().split('\n');
      t.match(lines[0], /^ID +EMAIL +NAME +ROLE +STATUS +VIP +GROUPS +LAST LOGIN$/);
      t.equal(lines.length, 3, 'a header row and one row per user');
      const column = lines[0].indexOf('EMAIL');
      t.ok(
        lines.slice(1).every((l) => /^\S+@/.test(l.slice(column))),
        'the columns are aligned under their header',
      );
      t.notOk(table.stdout.includes(ESC), 'no colour without a terminal');
      const asJson = await run(['users', 'list', '--output', 'json']);
      t.same(
        JSON.parse(asJson.stdout),
        JSON.parse((await run(['--json', 'users', 'list'])).stdout),
        '--json is --output json',
      );

      const forced = await run(['groups', 'list'], { FORCE_COLOR: '1' });
      t.ok(forced.stdout.startsWith(`${ESC}1mID`), 'FORCE_COLOR: a bold header');
      const noColor = await run(['groups', 'list'], { FORCE_COLOR: '1', NO_COLOR: '1' });
      t.notOk(noColor.stdout.includes(ESC), 'never under NO_COLOR');
      t.match(noColor.stdout, /^ID +NAME +MEMBERS +DESCRIPTION\n/);
      const flag = await run(['groups', 'list', '--no-color'], { FORCE_COLOR: '1' });
      t.notOk(flag.stdout.includes(ESC), 'nor with --no-color');
      const err = await run(['users', 'show', 'nobody@example.com'], { FORCE_COLOR: '1', NO_COLOR: '1' });
      t.equal(err.stderr, 'deskctl: error: User nobody@example.com not found\n');
    },
  );

  await t.test('api-keys list shows the last use', async (t) => {
    const resolved = await callRpc<{ key: string }, ResolveApiKeyReply>(h.nc, h.names.rpc.resolveApiKey, {
      key: boot.key,
    });
    t.match(resolved, { valid: true });
    const { keys } = await json(['api-keys', 'list', '--owner', 'root@example.com']);
    t.equal(keys.length, 1);
    t.ok(keys[0].lastUsedAt && Date.parse(keys[0].lastUsedAt) > 0, 'lastUsedAt set by the use');
    const table = await run(['api-keys', 'list']);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    t.match(header, /^ID +NAME +OWNER +SCOPES +PLAN +CREATED +EXPIRES +LAST USED +STATUS$/);
    const at = header.indexOf('LAST USED');
    const rootRow = rows.find((r) => r.startsWith(boot.keyId))!;
    const adaRow = rows.find((r) => !r.startsWith(boot.keyId))!;
    t.match(rootRow.slice(at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +active$/);
    t.match(adaRow.slice(at), /^never +active$/);
  });

  await t.test(
    'oauth-clients list / revoke: a revoked client is refused at the token endpoint and its live grants end',
    async (t) => {
      const made = await json([
        'oauth-clients',
        'create',
        '--name',
        'Web',
        '--redirect-uri',
        'https://app.example.com/cb',
      ]);
      const again = await json([
        'oauth-clients',
        'create',
        '--name',
        'Web',
        '--redirect-uri',
        'https://x.example.com/cb',
        '--if-not-exists',
      ]);
      t.match(again, { client_id: made.client_id, existed: true });
      t.notOk('client_secret' in again, 'the secret is never shown again');
      const token = () =>
        h.app.inject({
          method: 'POST',
          url: '/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            grant_type: 'authorization_code',
            code: 'gnt_unknown.code',
            redirect_uri: 'https://app.example.com/cb',
            client_id: made.client_id,
            client_secret: made.client_secret,
          }).toString(),
        });
      t.match(
        JSON.parse((await token()).body),
        { error: 'invalid_grant' },
        'before: the client authenticates',
      );

      // A live grant of the client: a user signs in, consents, and the code is exchanged.
      const password = 'correct horse battery staple';
      const owner = await createUser(h.deps, cliContext(), {
        email: 'grant.owner@example.com',
        name: 'Grant Owner',
        role: 'agent',
        password,
      });
      const verifier = randomBytes(32).toString('base64url');
      const authorize = new URL('/oauth/authorize', issuer);
      for (const [k, v] of Object.entries({
        client_id: made.client_id,
        redirect_uri: 'https://app.example.com/cb',
        response_type: 'code',
        scope: 'requests:read',
        state: 'st',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }))
        authorize.searchParams.set(k, v);
      const callback = await authorizeThroughForms(new FormBrowser(issuer), authorize.toString(), {
        email: 'grant.owner@example.com',
        password,
      });
      const exchanged = await h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code') ?? '',
          redirect_uri: 'https://app.example.com/cb',
          client_id: made.client_id,
          client_secret: made.client_secret,
          code_verifier: verifier,
        }).toString(),
      });
      t.equal(exchanged.statusCode, 200, 'the code is exchanged', { body: exchanged.body });
      t.ok(JSON.parse(exchanged.body).refresh_token, 'a live grant, with a refresh token');

      const { clients } = await json(['oauth-clients', 'list']);
      t.match(clients, [{ client_id: made.client_id, name: 'Web', public: false, revokedAt: null }]);
      t.notOk(JSON.stringify(clients).includes(made.client_secret), 'never the secret');
      const table = await run(['oauth-clients', 'list']);
      t.match(
        table.stdout,
        /^CLIENT ID +NAME +TYPE +PLAN +CREATED +STATUS +REDIRECT URIS\ncli_\w+ +Web +confidential +standard +\S+ +active +https:\/\/app\.example\.com\/cb\n$/,
      );

      const refused = await run(['oauth-clients', 'revoke', made.client_id]);
      t.equal(refused.code, 2, 'not without --yes');
      const revoked = await json(['oauth-clients', 'revoke', made.client_id, '--yes']);
      t.match(revoked, { client_id: made.client_id, alreadyRevoked: false, grantsRevoked: 1 });
      // The grant ends with it: the gateways are told to refuse the access tokens it issued.
      const notice = await h.waitForNotice((n) => n.kind === 'oauth_grant_revoked' && n.userId === owner.id);
      t.ok(notice.tokensExpireBy, 'the notice says until when its access tokens would have lived');
      const ev = await h.waitForEvent(
        (e) =>
          e.type === 'system.config_changed' && e.resourceId === made.client_id && !!e.changes?.revokedAt,
      );
      t.equal(ev.metadata.source, 'cli');
      const after = await token();
      t.equal(after.statusCode, 401);
      t.match(JSON.parse(after.body), { error: 'invalid_client' }, 'after: refused');
      t.match(await json(['oauth-clients', 'revoke', made.client_id, '--yes']), { alreadyRevoked: true });
      t.same((await json(['oauth-clients', 'list', '--active'])).clients, []);
      t.equal((await run(['oauth-clients', 'revoke', 'cli_unknown', '--yes'])).code, 1);
    },
  );

  await t.test(
    'on a terminal: a destructive command asks; colour unless NO_COLOR',
    { skip: !SCRIPT && 'no `script`' },
    async (t) => {
      const key = await json('api-keys create --owner root@example.com --name tty --scopes admin'.split(' '));
      const no = await onTerminal(h.cliEnv, ['api-keys', 'revoke', key.id], 'n');
      t.match(no.screen, `API key ${key.id} will be revoked for good. Continue? [y/N]`);
      t.equal(no.code, 1, 'answered no: cancelled');
      t.match(no.screen, /cancelled: nothing was changed/);
      t.match(
        await callRpc(h.nc, h.names.rpc.resolveApiKey, { key: key.key }),
        { valid: true },
        'the key works',
      );
      const yes = await onTerminal(h.cliEnv, ['api-keys', 'revoke', key.id], 'y');
      t.equal(yes.code, 0, yes.screen);
      t.match(yes.screen, `revoked ${key.id}`);
      t.match(await callRpc(h.nc, h.names.rpc.resolveApiKey, { key: key.key }), { valid: false });

      const coloured = await onTerminal(h.cliEnv, ['groups', 'list']);
      t.ok(coloured.screen.includes(`${ESC}1mID`), 'a bold header on a terminal');
      const plain = await onTerminal({ ...h.cliEnv, NO_COLOR: '1' }, ['groups', 'list']);
      t.equal(plain.code, 0);
      t.notOk(plain.screen.includes(`${ESC}1m`), 'none under NO_COLOR');
    },
  );

  await t.test('destructive commands: refused without a terminal unless --yes', async (t) => {
    for (const args of [
      ['users', 'deactivate', 'ada@example.com'],
      ['api-keys', 'revoke', boot.keyId],
      ['settings', 'ip-allowlist', 'clear'],
    ]) {
      const r = await run(args);
      t.equal(r.code, 2, `${args.join(' ')}: exit 2`);
      t.match(r.stderr, /refusing without confirmation \(no terminal to ask on\); add --yes/);
    }
    t.match(await json(['users', 'show', 'ada@example.com']), { status: 'active' }, 'nothing was done');
    t.match(
      await callRpc(h.nc, h.names.rpc.resolveApiKey, { key: boot.key }),
      { valid: true },
      'the key works',
    );
    const done = await json(['users', 'deactivate', 'ada@example.com', '--yes']);
    t.match(done, { id: ada.id, status: 'inactive' });
    t.match(await json(['users', 'show', ada.id]), { status: 'inactive' });
  });
});
