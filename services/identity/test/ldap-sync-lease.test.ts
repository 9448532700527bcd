import { eventually, generatePeople, startPrivateSlapd } from '@support-desk/platform/testing';
import t from 'tap';
import { cliContext } from '../src/use-cases/deps.js';
import {
  createIdentityProvider,
  findIdentityProvider,
  provisioningContext,
} from '../src/use-cases/identity-providers.js';
import { ldapSettings } from '../src/use-cases/ldap-settings.js';
import { createLdapSyncScheduler, runLdapSync } from '../src/use-cases/ldap-sync.js';
import { applyPlan, currentState } from '../src/use-cases/ldap-sync-apply.js';
import { planSync } from '../src/use-cases/ldap-sync-plan.js';
import { acquireSyncLease, LEASE_SLOT_MS } from '../src/use-cases/sync-lease.js';
import { harness } from './helpers.js';

t.test('the sync lease: one holder at a time, lost when renewed too late', async (t) => {
  const h = await harness(t);
  let now = Date.parse('2030-01-01T10:00:10Z');
  const clock = () => new Date(now);
  const attempts = await Promise.all(
    Array.from({ length: 8 }, (_, i) => acquireSyncLease(h.deps.syncLeases, 'corp', clock, `replica-${i}`)),
  );
  const holders = attempts.filter((l) => l !== null);
  t.equal(holders.length, 1, 'of 8 concurrent claims, exactly one holds the lease');
  const lease = holders[0]!;
  t.equal(await acquireSyncLease(h.deps.syncLeases, 'corp', clock, 'late'), null, 'held: refused');

  now += LEASE_SLOT_MS; // into the next slot, claimed in advance
  t.equal(await lease.renew(), true, 'renewed in time');
  t.equal(await acquireSyncLease(h.deps.syncLeases, 'corp', clock, 'late'), null, 'still held');

  now += 3 * LEASE_SLOT_MS; // the holder stalled: its claims ran out
  const taker = await acquireSyncLease(h.deps.syncLeases, 'corp', clock, 'taker');
  t.ok(taker, 'a stalled holder is taken over');
  t.equal(await lease.renew(), false, 'and learns it lost the lease');
  await taker!.release();
  t.ok(await acquireSyncLease(h.deps.syncLeases, 'corp', clock, 'next'), 'released: free again');
});

t.test('two replicas, one scheduled sync; an interrupted run is finished by the next', async (t) => {
  const slapd = await startPrivateSlapd(t, {
    people: generatePeople(12),
    groups: [{ cn: 'Tier 2', members: ['user1', 'user2', 'user3'] }],
  });
  const h = await harness(t, { IDENTITY_LDAP_SYNC_TICK_MS: '0' });
  const deps = { ...h.deps, bindPassword: async () => slapd.reader.password };
  await createIdentityProvider(deps, cliContext(), {
    name: 'corp',
    kind: 'ldap',
    ldap: {
      url: slapd.url,
      bindDn: slapd.reader.dn,
      passwordEnv: 'LDAP_BIND_PASSWORD_UNUSED_HERE',
      baseDn: slapd.suffix,
      intervalMinutes: 15,
    },
  });

  await t.test('an interrupted run leaves a state the next run completes', async (t) => {
    const connection = await findIdentityProvider(deps, 'corp');
    const settings = ldapSettings(connection.ldap, { secretsDir: h.config.LDAP_SECRETS_DIR });
    const snapshot = await deps.readDirectory(settings, slapd.reader.password);
    const decision = planSync(snapshot, await currentState(deps, 'corp'), settings);
    t.ok(decision.ok);
    if (!decision.ok) return;
    let writes = 0;
    // The "crash": the lease is lost after 5 changes (groups first, then users).
    await t.rejects(
      applyPlan(deps, connection, provisioningContext(connection), decision.plan, async () => {
        if (++writes > 5) throw new Error('interrupted');
      }),
      { message: 'interrupted' },
    );
    t.equal((await deps.users.ofProvider('corp', 100)).length, 4, 'half done: 1 group and 4 users');
    const result = await runLdapSync(deps, 'corp', { trigger: 'cli' });
    t.match(result, { outcome: 'succeeded', usersCreated: 8, groupsChanged: 0, membershipsChanged: 3 });
    const users = await deps.users.ofProvider('corp', 100);
    t.equal(users.length, 12, 'every user once');
    t.equal(new Set(users.map((u) => u.externalId)).size, 12);
    await h.waitForEvent((e) => e.type === 'system.sync_completed');
    const created = () => h.events.filter((e) => e.type === 'user.created');
    await eventually(() => created().length >= 12 || undefined, {
      timeoutMs: 10_000,
      what: '12 user.created',
    });
    t.equal(new Set(created().map((e) => e.resourceId)).size, 12, 'one user.created per user, none twice');
    t.equal(created().length, 12);
  });

  await t.test(
    'two replicas tick at once: one runs the due sync, the other finds it held or done',
    async (t) => {
      h.advance(16 * 60_000); // the 15-minute interval has passed
      const replicaA = createLdapSyncScheduler(deps, { tickMs: 60_000 });
      const replicaB = createLdapSyncScheduler(deps, { tickMs: 60_000 });
      const ran = await Promise.all([replicaA.runNow(), replicaB.runNow()]);
      t.equal(ran[0] + ran[1], 1, 'exactly one scheduled run');
      const last = (await findIdentityProvider(deps, 'corp')).lastSync!;
      t.match(last, { trigger: 'schedule', outcome: 'succeeded' });
      t.same(await Promise.all([replicaA.runNow(), replicaB.runNow()]), [0, 0], 'not due again yet');
    },
  );

  await t.test('deskctl-style runs: a second one while one runs is refused', async (t) => {
    const both = await Promise.allSettled([
      runLdapSync(deps, 'corp', { trigger: 'cli' }),
      runLdapSync(deps, 'corp', { trigger: 'cli' }),
    ]);
    const refused = both.filter((r) => r.status === 'rejected');
    t.equal(refused.length, 1);
    t.match((refused[0] as PromiseRejectedResult).reason, { code: 'CONFLICT', message: /already running/ });
  });
});
