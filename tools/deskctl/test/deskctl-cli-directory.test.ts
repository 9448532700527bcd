import t from 'tap';
import { cliContext, createUser } from '@support-desk/identity/testing';
import { ESC, storeSession } from './deskctl-session.js';

// deskctl's directory commands against a real store and NATS (issue 19): --if-not-exists, users
// and groups, output formats and colour, and a webhooks command with no webhooks service.

t.test('directory commands against the store', async (t) => {
  const { h, run, json, ada } = await storeSession(t);

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
    // listen opens its port, then cannot subscribe: one clear line, and the port is closed again.
    const listen = await run(['webhooks', 'listen', '--forward-to', 'http://localhost:3000/hooks']);
    t.equal(listen.code, 1);
    t.match(listen.stderr, /^deskctl: error: The webhooks service is not answering/);
    t.equal(listen.stdout, '', 'no ready line');
  });

  await t.test('webhooks trigger and listen: usage errors (exit 2) before anything is sent', async (t) => {
    const unknown = await run(['webhooks', 'trigger', 'request.exploded']);
    t.equal(unknown.code, 2);
    t.match(
      unknown.stderr,
      /"request\.exploded" is not an event type; the catalogue: request\.created, request\.updated, .*system\.config_changed\n/,
      'the catalogue listed',
    );
    t.match(unknown.stderr, /Run 'deskctl webhooks trigger --help' for usage/);
    const noTarget = await run(['webhooks', 'listen']);
    t.equal(noTarget.code, 2);
    t.match(noTarget.stderr, /--forward-to is required/);
    const notUrl = await run(['webhooks', 'listen', '--forward-to', 'localhost:3000']);
    t.equal(notUrl.code, 2);
    t.match(notUrl.stderr, /--forward-to must be an http:\/\/ or https:\/\/ URL/);
    const badPort = await run([
      'webhooks',
      'listen',
      '--forward-to',
      'http://localhost:3000',
      '--port',
      '70000',
    ]);
    t.equal(badPort.code, 2);
    t.match(badPort.stderr, /--port must be a port number/);
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
  await t.test('a list says when it is not the whole list: a footer, --page, --all', async (t) => {
    const before = (await json(['users', 'list'])).pagination.total as number;
    for (let i = 0; i < 25 - before; i++) {
      await createUser(h.deps, cliContext(), {
        email: `many${i}@example.com`,
        name: `Many ${i}`,
        role: 'viewer',
      });
    }
    const rows = (out: string) => out.trimEnd().split('\n').length - 1;
    const first = await run(['users', 'list']);
    t.equal(rows(first.stdout), 20, 'the first page');
    t.equal(first.stderr.trim(), 'Showing 1–20 of 25 — next: --page 2, or --all for every one', 'says so');
    const second = await run(['users', 'list', '--page', '2']);
    t.equal(rows(second.stdout), 5);
    t.equal(second.stderr.trim(), 'Showing 21–25 of 25 (the last page)');
    const all = await run(['users', 'list', '--all']);
    t.equal(rows(all.stdout), 25, '--all: every page');
    t.equal(all.stderr, '', 'the whole list needs no footer');
    const asJson = await run(['users', 'list', '--json']);
    t.equal(asJson.stderr, '', 'no footer in JSON: the pagination says it');
    t.match(JSON.parse(asJson.stdout).pagination, { page: 1, limit: 20, total: 25, pages: 2 });
    t.equal((await json(['users', 'list', '--all'])).users.length, 25);
    const past = await run(['users', 'list', '--page', '9']);
    t.equal(past.stdout.trim(), 'no users on page 9');
    t.equal(past.stderr.trim(), '25 users in all: page 9 is past the end');
    const both = await run(['users', 'list', '--all', '--page', '2']);
    t.equal(both.code, 2, '--all with --page is a usage error');

    await json(['groups', 'create', '--name', 'Footer A']);
    await json(['groups', 'create', '--name', 'Footer B']);
    const groups = await run(['groups', 'list', '--limit', '1']);
    t.match(groups.stderr, /^Showing 1–1 of \d+ — next: --page 2, or --all for every one\n$/, 'groups too');
    const keys = await run(['api-keys', 'list', '--limit', '1']);
    t.match(keys.stderr, /^Showing 1–1 of \d+ — next: --page 2/, 'and API keys');
    for (const list of [
      'users list',
      'groups list',
      'api-keys list',
      'oauth-clients list',
      'idp list',
      'dead-letters list',
      'webhooks list',
      'webhooks deliveries',
    ]) {
      const help = await run([...list.split(' '), '--help']);
      t.match(help.stdout, /--limit <N>[^]*--page <N>[^]*--all /, `${list}: --limit, --page and --all`);
    }
  });
});
