// `deskctl batch`: many commands in one process, one JSON answer line per command, in order; the
// same use cases and events as one command per process; bad lines answered, not fatal.
import { type ResolveApiKeyReply } from '@support-desk/contracts';
import { callRpc } from '@support-desk/platform/messaging';
import t from 'tap';
import { callerOf, harness } from '@support-desk/identity/testing';
import { MAX_BATCH_COMMANDS } from '../src/batch.js';
import { deskctl } from './helpers.js';

const lines = (...commands: (string[] | string)[]) =>
  commands.map((c) => (typeof c === 'string' ? c : JSON.stringify(c))).join('\n') + '\n';
const answers = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

t.test('deskctl batch', async (t) => {
  const h = await harness(t);
  const batch = (stdin: string, args: string[] = []) => deskctl(h.cliEnv, ['batch', ...args], stdin);

  await t.test('runs every command in order, answering each as --json would', async (t) => {
    const email = 'batch.agent@example.com';
    const r = await batch(
      lines(
        ['groups', 'create', '--name', 'Batch group', '--description', 'made in a batch', '--if-missing'],
        ['groups', 'create', '--name', 'Batch group', '--if-missing'],
        ['users', 'create', '--email', email, '--name', 'Batch Agent', '--role', 'agent', '--json'],
        ['api-keys', 'create', '--owner', email, '--name', 'batch', '--scopes', 'requests:read'],
      ),
    );
    t.equal(r.code, 0, r.stderr);
    const [group, again, user, key] = answers(r.stdout);
    t.match(group, { ok: true, result: { name: 'Batch group', description: 'made in a batch' } });
    t.match(again, { ok: true, result: { id: group.result.id, existed: true } });
    t.match(user, { ok: true, result: { email, role: 'agent' } });
    t.match(key, { ok: true, result: { name: 'batch', owner: { email } } });
    const reply = await callRpc<{ key: string }, ResolveApiKeyReply>(
      h.nc,
      h.names.rpc.resolveApiKey,
      {
        key: key.result.key,
      },
      callerOf('resolveApiKey'),
    );
    t.match(reply, { valid: true, scopes: ['requests:read'] });
    const created = await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === user.result.id);
    t.equal(created.metadata.source, 'cli', 'events from the CLI, as with one command per process');

    const revoke = await batch(lines(['api-keys', 'revoke', key.result.id, '--yes']));
    t.equal(revoke.code, 0, revoke.stderr);
    t.match(answers(revoke.stdout), [{ ok: true, result: { id: key.result.id } }]);
    await h.waitForNotice((n) => n.kind === 'api_key_revoked' && n.keyId === key.result.id);
  });

  await t.test('a bad line is answered and the batch goes on; the exit code says one failed', async (t) => {
    const r = await batch(
      lines(
        'not json',
        '["users", 3]',
        ['batch'],
        ['frobnicate'],
        ['users', 'create', '--email', 'x@example.com', '--name', 'X', '--role', 'agent', '--password-stdin'],
        ['api-keys', 'revoke', 'key_00000000000000000000000000', '--yes'],
        '',
        ['groups', 'list'],
      ),
    );
    t.equal(r.code, 1);
    const got = answers(r.stdout);
    t.equal(got.length, 7, 'one answer per command, blank lines skipped');
    t.match(got.slice(0, 5), [
      { ok: false, usage: true, error: /JSON array/ },
      { ok: false, usage: true, error: /array of strings/ },
      { ok: false, usage: true, error: /another batch/ },
      { ok: false, usage: true, error: /unknown command/ },
      { ok: false, usage: true, error: /password-stdin/ },
    ]);
    t.match(got[5], { ok: false, usage: false }, 'a refused command (no such key) is not a usage error');
    t.match(got[6], { ok: true, result: { groups: Array } });
  });

  await t.test('the batch itself takes no arguments; an empty batch succeeds', async (t) => {
    const extra = await batch('', ['extra']);
    t.equal(extra.code, 2);
    t.match(extra.stderr, /usage/);
    const empty = await batch('');
    t.equal(empty.code, 0, empty.stderr);
    t.equal(empty.stdout, '');
    t.ok(MAX_BATCH_COMMANDS >= 1000, 'a batch is bounded, well above what a provisioning script sends');
  });
});
