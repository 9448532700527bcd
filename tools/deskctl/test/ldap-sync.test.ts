import { generatePeople, metricValue, startPrivateSlapd } from '@support-desk/platform/testing';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  bindPasswordReader,
  body,
  cliContext,
  findIdentityProvider,
  harness,
  identityProviderModel,
  runLdapSync,
  updateIdentityProvider,
} from '@support-desk/identity/testing';
import { deskctl } from './helpers.js';

// The bind password reaches identity (in this process) and deskctl (spawned) by variable, as in production.
const PASSWORD_VAR = 'LDAP_BIND_PASSWORD_TEST';

t.test(
  'LDAP sync against a real slapd: first sync, changes, a leaver, the threshold, a failing directory',
  async (t) => {
    const slapd = await startPrivateSlapd(t, {
      people: generatePeople(10),
      groups: [
        { cn: 'Support Agents', members: ['user1', 'user2', 'user3', 'user4', 'user5', 'user6'] },
        { cn: 'Desk Admins', members: ['user1'] },
      ],
    });
    process.env[PASSWORD_VAR] = slapd.reader.password;
    t.teardown(() => {
      delete process.env[PASSWORD_VAR];
    });
    const h = await harness(t);
    const env = { ...h.cliEnv, [PASSWORD_VAR]: slapd.reader.password };
    const run = (...args: string[]) => deskctl(env, [...args, '--json']);
    const corpUsers = async () =>
      new Map((await h.deps.users.ofProvider('corp', 100)).map((u) => [u.email, u]));
    // The n-th system.sync_completed (from 0): one per run, in the order of the runs.
    const syncEvent = async (n: number) => {
      const runs = () => h.events.filter((e) => e.type === 'system.sync_completed');
      return h.waitForEvent((e) => runs()[n] === e, `sync event #${n + 1}`);
    };

    const res = await run(
      'idp',
      'create',
      'corp',
      '--kind',
      'ldap',
      '--default-role',
      'agent',
      '--group-role',
      `${slapd.groupDn('Desk Admins')}=admin`,
      '--url',
      slapd.url,
      '--bind-dn',
      slapd.reader.dn,
      '--password-env',
      PASSWORD_VAR,
      '--base-dn',
      slapd.suffix,
      '--metadata',
      'department=departmentNumber',
      '--metadata',
      'title=title',
      '--interval',
      '15m',
      '--max-deactivate-percent',
      '20',
    );
    t.equal(res.code, 0, res.stderr);
    t.match(res.json.ldap, {
      url: slapd.url,
      passwordEnv: PASSWORD_VAR,
      userFilter: '(objectClass=inetOrgPerson)',
      intervalMinutes: 15,
      attributes: { externalId: 'entryUUID', email: 'mail' },
    });
    const stored = await h.conn.db!.collection('identity_providers').findOne({ _id: 'corp' as never });
    t.notOk(JSON.stringify(stored).includes(slapd.reader.password), 'the password is never stored');

    await t.test('first sync (deskctl idp sync): users, groups, roles, memberships, one event', async (t) => {
      const res = await run('idp', 'sync', 'corp');
      t.equal(res.code, 0, res.stderr);
      t.match(res.json, {
        provider: 'corp',
        trigger: 'cli',
        outcome: 'succeeded',
        usersCreated: 10,
        usersUpdated: 0,
        usersDeactivated: 0,
        groupsChanged: 2,
        membershipsChanged: 6,
        errors: 0,
      });
      const users = await corpUsers();
      t.equal(users.size, 10);
      const user1 = users.get('user1@example.test')!;
      t.equal(user1.role, 'admin', 'Desk Admins → admin');
      t.equal(users.get('user2@example.test')!.role, 'agent', 'the default role');
      t.equal(user1.groups.length, 2);
      t.match(user1.externalId, /^[0-9a-f-]{36}$/, 'externalId is the entryUUID');
      const view = await h.app.inject({
        method: 'GET',
        url: `/v1/users/${user1._id}`,
        headers: await h.headers(),
      });
      t.match(body(view).data, {
        identityProvider: 'corp',
        name: 'User 1',
        status: 'active',
        metadata: { department: 'd1', title: 'Agent' },
      });
      t.same(
        body(view)
          .data.groups.map((g: { name: string }) => g.name)
          .sort(),
        ['Desk Admins', 'Support Agents'],
      );
      const event = await syncEvent(0);
      t.match(event, {
        resourceType: 'system',
        resourceId: 'idp:corp',
        actor: { id: 'idp:corp', role: 'system' },
        metadata: { source: 'ldap' },
        changes: {
          provider: { from: null, to: 'corp' },
          outcome: { to: 'succeeded' },
          usersCreated: { to: 10 },
          usersDeactivated: { to: 0 },
          groupsChanged: { to: 2 },
        },
      });
      t.type(event.changes!.durationMs.to, 'number');
      const created = h.events.filter((e) => e.type === 'user.created');
      t.equal(created.length, 10, 'one user.created per user');
      t.ok(
        created.every((e) => e.metadata.source === 'ldap'),
        'with source ldap',
      );

      const again = await run('idp', 'sync', 'corp');
      t.match(again.json, { outcome: 'succeeded', usersCreated: 0, usersUpdated: 0, membershipsChanged: 0 });
      t.equal((await h.deps.users.ofProvider('corp', 100)).length, 10, 'a second run changes nothing');
    });

    await t.test('directory changes: a new user, a rename, a leaver, a membership', async (t) => {
      await slapd.addPerson({
        uid: 'user11',
        cn: 'User 11',
        mail: 'user11@example.test',
        departmentNumber: 'd2',
      });
      await slapd.setAttribute(slapd.userDn('user3'), 'cn', 'User Three');
      await slapd.removePerson('user10');
      await slapd.setAttribute(
        slapd.groupDn('Support Agents'),
        'member',
        ['user1', 'user3', 'user4', 'user5', 'user6'].map(slapd.userDn),
      );
      const result = await runLdapSync(h.deps, 'corp', { trigger: 'cli' });
      t.match(result, {
        outcome: 'succeeded',
        usersCreated: 1,
        usersUpdated: 1,
        usersDeactivated: 1,
        membershipsChanged: 1,
      });
      const users = await corpUsers();
      t.equal(users.get('user3@example.test')!.name, 'User Three');
      t.equal(users.get('user10@example.test')!.status, 'inactive', 'the removed user is deactivated');
      t.ok(users.get('user10@example.test')!.deactivatedAt);
      t.equal(users.get('user2@example.test')!.groups.length, 0, 'left the group');
      const deactivated = await h.waitForEvent(
        (e) => e.type === 'user.deactivated' && e.resourceId === users.get('user10@example.test')!._id,
      );
      t.equal(deactivated.metadata.source, 'ldap');
      t.match(await syncEvent(2), { changes: { usersDeactivated: { to: 1 } } });
    });

    await t.test('the safety threshold stops a run that would deactivate too many', async (t) => {
      for (const uid of ['user6', 'user7', 'user8']) await slapd.removePerson(uid);
      const stopped = await runLdapSync(h.deps, 'corp', { trigger: 'cli' });
      t.match(stopped, { outcome: 'stopped', usersDeactivated: 0, reason: /3 of 10 active users/ });
      t.equal((await corpUsers()).get('user6@example.test')!.status, 'active', 'nobody deactivated');
      t.match(await syncEvent(3), { changes: { outcome: { to: 'stopped' }, reason: { to: /3 of 10/ } } });

      // An administrator who means it raises the threshold for one run.
      const res = await run('idp', 'sync', 'corp', '--max-deactivate-percent', '50');
      t.equal(res.code, 0, res.stderr);
      t.match(res.json, { outcome: 'succeeded', usersDeactivated: 3 });
    });

    await t.test('a directory that answers nothing never deactivates everyone', async (t) => {
      const connection = await findIdentityProvider(h.deps, 'corp');
      await updateIdentityProvider(h.deps, cliContext(), 'corp', {
        ldap: { ...connection.ldap, baseDn: `ou=system,${slapd.suffix}` },
      });
      const result = await runLdapSync(h.deps, 'corp', { trigger: 'cli', maxDeactivatePercent: 100 });
      t.match(result, { outcome: 'stopped', reason: /returned no users/, usersDeactivated: 0 });
      await updateIdentityProvider(h.deps, cliContext(), 'corp', { ldap: connection.ldap });
    });

    await t.test('a failing directory: the run fails, changes nothing, and says so', async (t) => {
      await slapd.stop();
      const res = await run('idp', 'sync', 'corp');
      t.equal(res.code, 1, 'deskctl reports the failure');
      t.match(res.json, { outcome: 'failed', usersDeactivated: 0, reason: /ECONNREFUSED|connect/i });
      const active = [...(await corpUsers()).values()].filter((u) => u.status === 'active');
      t.equal(active.length, 7, 'nobody deactivated');
      const failed = await h.waitForEvent(
        (e) => e.type === 'system.sync_completed' && e.changes?.outcome?.to === 'failed',
      );
      t.match(failed.changes, { provider: { to: 'corp' }, reason: { to: /./ } });

      await slapd.start();
      // Every run is counted by its outcome: the LdapSyncFailing alert reads failed ones.
      const runs = (outcome: string) => metricValue('identity_ldap_syncs_total', { trigger: 'cli', outcome });
      const before = { failed: await runs('failed'), succeeded: await runs('succeeded') };
      const wrong = await runLdapSync({ ...h.deps, bindPassword: async () => 'not the password' }, 'corp', {
        trigger: 'cli',
      });
      t.match(wrong, { outcome: 'failed', reason: /Invalid Credentials/i });
      t.equal(await runs('failed'), before.failed + 1, 'the failed run counted');
      const ok = await runLdapSync(h.deps, 'corp', { trigger: 'cli' });
      t.match(ok, { outcome: 'succeeded', usersCreated: 0, usersDeactivated: 0 });
      t.equal(await runs('succeeded'), before.succeeded + 1, 'the run that succeeded counted');
    });

    await t.test(
      'the bind password only from LDAP_BIND_PASSWORD… or the secrets directory, never in clear, checked on every run',
      async (t) => {
        const connection = await findIdentityProvider(h.deps, 'corp');
        const good = connection.ldap!;
        const reads: unknown[] = [];
        const watched = {
          ...h.deps,
          bindPassword: async (ref: unknown) => {
            reads.push(ref);
            return h.deps.bindPassword(ref as never);
          },
        };
        // Settings stored before the rules (or written around the use cases) fail the run before
        // any password is read. Written through the model, whose writes by id queue behind the
        // aggregate's lock like the outbox relay's clean-up: FerretDB rewrites a document whole,
        // so a write around the lock could be lost under the relay's removal of the run's event.
        const stored = identityProviderModel(h.conn);
        for (const [ldap, reason] of [
          [{ ...good, passwordEnv: 'OAUTH_SIGNING_KEYS' }, /ldap\.passwordEnv/],
          [{ ...good, passwordEnv: null, passwordFile: '/etc/passwd' }, /ldap\.passwordFile/],
          [{ ...good, url: 'ldap://ldap.example.com:389' }, /ldap\.url/],
        ] as const) {
          await stored.updateOne({ _id: 'corp' }, { $set: { ldap } });
          const result = await runLdapSync(watched, 'corp', { trigger: 'cli' });
          t.match(result, { outcome: 'failed', reason }, JSON.stringify(ldap));
        }
        t.same(reads, [], 'no password was read');
        // A link inside the secrets directory to a file outside it is refused when read.
        const secrets = await mkdtemp(join(tmpdir(), 'sd-ldap-secrets-'));
        t.teardown(() => rm(secrets, { recursive: true, force: true }));
        const outside = join(await mkdtemp(join(tmpdir(), 'sd-ldap-outside-')), 'oauth-keys');
        await writeFile(outside, slapd.reader.password);
        await symlink(outside, join(secrets, 'corp'));
        const reader = bindPasswordReader(() => undefined, secrets);
        await t.rejects(reader({ passwordEnv: null, passwordFile: join(secrets, 'corp') }), /not inside/);
        await writeFile(join(secrets, 'real'), `${slapd.reader.password}\n`);
        t.equal(
          await reader({ passwordEnv: null, passwordFile: join(secrets, 'real') }),
          slapd.reader.password,
        );
        await t.rejects(
          reader({ passwordEnv: 'OAUTH_SIGNING_KEYS', passwordFile: null }),
          /LDAP_BIND_PASSWORD/,
        );
        // StartTLS asked of a directory that offers no TLS: the run fails before the bind.
        await stored.updateOne({ _id: 'corp' }, { $set: { ldap: { ...good, startTls: true } } });
        const clear = await runLdapSync(watched, 'corp', { trigger: 'cli' });
        t.match(clear, { outcome: 'failed', usersCreated: 0 });
        t.notMatch(clear?.reason ?? '', /Invalid Credentials/i, 'it never got to the bind');
        await stored.updateOne({ _id: 'corp' }, { $set: { ldap: good } });
        t.match(await runLdapSync(h.deps, 'corp', { trigger: 'cli' }), { outcome: 'succeeded' });
      },
    );

    await t.test('idp show tells the latest run', async (t) => {
      const res = await run('idp', 'show', 'corp');
      t.match(res.json.lastSync, { provider: 'corp', outcome: 'succeeded', trigger: 'cli' });
      const text = await deskctl(env, ['idp', 'show', 'corp']);
      t.match(text.stdout, /last sync: corp: succeeded/);
    });
  },
);
