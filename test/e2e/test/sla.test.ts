// SLA alerts end to end: with a policy of seconds, the monitor in the requests process warns and
// breaches on its own; each alert reaches the audit log through NATS exactly once, with its
// `changes` field names (`sla.responseStatus`, dotted) intact, and the request shows the statuses.
// SLA policies (issue 38) through the gateway: picking, pauses, and their events to audit and webhooks;
// and through deskctl (the requests admin RPC).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReceiver } from '@support-desk/platform/testing';
import t from 'tap';
import { cast } from '../src/actors.js';
import { expectOk } from '../src/expect.js';
import type { Json } from '../src/http.js';
import { eventually, sleep, startStack } from '../src/stack.js';
import { createRequest } from '../src/world.js';

// Low priority, standard tier: first response due after 12 s, resolution after 18 s; warnings at 80 %.
const POLICY = { standard: { low: { responseMinutes: 0.2, resolutionMinutes: 0.3 } } };
const stack = await startStack(t, {
  env: { SLA_POLICY: JSON.stringify(POLICY), SLA_MONITOR_INTERVAL_MS: '250' },
});
const { admin, agent } = await cast(stack);

t.test(
  'a request nobody answers: breaches once per clock, warnings at most once, in the audit log',
  async (t) => {
    const created = await createRequest(t, agent.api, { priority: 'low' });
    const alertsOf = async (): Promise<Json[]> => {
      const res = await admin.api.get(
        `/v1/events?resourceId=${created.id}&type=system.sla_warning,system.sla_breach&limit=100`,
      );
      return res.status === 200 ? res.json.data.events : [];
    };
    const breachOf = (events: Json[], clock: string) =>
      events.filter((e) => e.type === 'system.sla_breach' && `sla.${clock}Status` in (e.changes ?? {}));

    // Bounded wait: both targets pass at 18 s; the monitor and the audit log follow within seconds.
    let events: Json[] = [];
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      events = await alertsOf();
      if (breachOf(events, 'response').length > 0 && breachOf(events, 'resolution').length > 0) break;
      await sleep(500);
    }
    await sleep(2_000); // eight more monitor passes: nothing may be emitted twice
    events = await alertsOf();

    for (const clock of ['response', 'resolution']) {
      const breaches = breachOf(events, clock);
      t.equal(breaches.length, 1, `one ${clock} breach`);
      const warnings = events.filter(
        (e) => e.type === 'system.sla_warning' && `sla.${clock}Status` in (e.changes ?? {}),
      );
      t.ok(warnings.length <= 1, `at most one ${clock} warning (${warnings.length})`);
      if (warnings[0] && breaches[0]) {
        t.ok(warnings[0].timestamp <= breaches[0].timestamp, `the ${clock} warning comes before its breach`);
        t.equal(warnings[0].changes[`sla.${clock}Status`].to, 'at_risk');
      }
      if (!breaches[0]) continue;
      t.equal(breaches[0].resourceType, 'system');
      t.equal(breaches[0].changes[`sla.${clock}Status`].to, 'breached');
      t.match(breaches[0].changes[`sla.${clock}Target`], { from: null, to: /^\d{4}-\d{2}-\d{2}T/ });
    }

    const single = expectOk(
      t,
      await agent.api.get(`/v1/requests/${created.id}`),
      200,
      'GET /v1/requests/:id',
    );
    t.match(single?.sla, { tier: 'standard', responseStatus: 'breached', resolutionStatus: 'breached' });
  },
);

t.test(
  'SLA policies through the gateway: picked for a request, paused while pending, changes in the audit log and to webhooks',
  async (t) => {
    const receiver = await startReceiver(t);
    const hook = await admin.api.post('/v1/webhooks', {
      url: receiver.url,
      events: ['system.config_changed'],
    });
    t.equal(hook.status, 201, hook.text);
    const created = await admin.api.post('/v1/sla-policies', {
      name: 'e2e-high',
      match: { priorities: ['high'] },
      targets: Object.fromEntries(
        ['critical', 'high', 'medium', 'low'].map((p) => [
          p,
          { firstResponseMinutes: 60, resolutionMinutes: 480 },
        ]),
      ),
      calendar: {
        timeZone: 'Europe/Berlin',
        hours: [
          { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], from: '09:00', to: '17:00' },
        ],
        holidays: [],
      },
    });
    t.equal(created.status, 201, created.text);
    const policy = created.json.data as { id: string; name: string };
    t.equal((await agent.api.get(`/v1/sla-policies/${policy.id}`)).status, 200, 'agents read policies');

    const request = await createRequest(t, agent.api, { priority: 'high' });
    let sla = expectOk(
      t,
      await agent.api.get(`/v1/requests/${request.id}`),
      200,
      'GET /v1/requests/:id',
    )?.sla;
    t.match(sla, { tier: 'e2e-high:high', policy: { id: policy.id, name: 'e2e-high' } });
    t.equal(sla.response.state, 'running');
    t.ok(
      sla.response.remainingSeconds <= 3600 && sla.response.remainingSeconds > 3500,
      'an hour of business time',
    );
    t.equal(Date.parse(sla.response.breachAt), Date.parse(sla.responseTarget));

    t.equal((await agent.api.patch(`/v1/requests/${request.id}`, { status: 'pending' })).status, 200);
    sla = expectOk(t, await agent.api.get(`/v1/requests/${request.id}`), 200, 'GET /v1/requests/:id')?.sla;
    t.match(sla.response, { state: 'paused', breachAt: null }, 'waiting on the customer: paused');

    await admin.api.patch(`/v1/sla-policies/${policy.id}`, { description: 'office hours' });
    const audited = await eventually(
      async () => {
        const res = await admin.api.get(`/v1/events?resourceId=${policy.id}&type=system.config_changed`);
        const events = res.status === 200 ? (res.json.data.events as Json[]) : [];
        return events.length === 2 ? events : undefined;
      },
      { what: "the policy's two events in the audit log" },
    );
    t.ok(
      audited.every((e) => e.actor.id === admin.id),
      'the admin as actor',
    );
    const delivered = await eventually(
      async () => {
        const bodies = receiver.received.map((r) => JSON.parse(r.body) as Json);
        const mine = bodies.filter((b) => b.data?.resourceId === policy.id || b.resourceId === policy.id);
        return mine.length === 2 ? mine : undefined;
      },
      { what: "the policy's two events delivered to the webhook" },
    );
    t.equal(delivered.length, 2);
  },
);

t.test('deskctl sla-policies: create from flags and a file, list, show, update, delete', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sla-policy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'policy.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'from-file',
      description: 'weekdays in Berlin',
      position: 50,
      match: { vip: true },
      targets: Object.fromEntries(
        ['critical', 'high', 'medium', 'low'].map((p) => [
          p,
          { firstResponseMinutes: 30, resolutionMinutes: 240 },
        ]),
      ),
      calendar: {
        timeZone: 'UTC',
        hours: [
          { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], from: '09:00', to: '17:00' },
        ],
        holidays: [],
      },
    }),
  );
  // The file, then the flags on top: the name and the zone given here win, the hours stay.
  const fromFile = await stack.deskctlJson([
    'sla-policies',
    'create',
    '--file',
    file,
    '--name',
    'deskctl-vip',
    '--time-zone',
    'Europe/Berlin',
  ]);
  t.match(fromFile, {
    id: /^slp_/,
    name: 'deskctl-vip',
    position: 50,
    match: { vip: true },
    calendar: { timeZone: 'Europe/Berlin', hours: [{ from: '09:00', to: '17:00' }] },
  });
  const fromFlags = await stack.deskctlJson([
    'sla-policies',
    'create',
    '--name',
    'deskctl-critical',
    '--position',
    '51',
    '--priorities',
    'critical',
    '--targets',
    'critical=15/60,high=60/240,medium=240/1440,low=480/2880',
    '--pause-statuses',
    '',
  ]);
  t.match(fromFlags, {
    match: { priorities: ['critical'] },
    targets: { critical: { firstResponseMinutes: 15, resolutionMinutes: 60 } },
    pauseStatuses: [],
    calendar: { timeZone: 'UTC' },
  });

  const listed = await stack.deskctlJson(['sla-policies', 'list', '--all']);
  const ids = listed.policies.map((p: Json) => p.id);
  t.ok(
    ids.indexOf(fromFile.id) >= 0 && ids.indexOf(fromFile.id) < ids.indexOf(fromFlags.id),
    'in the order tried',
  );
  const shown = await stack.deskctl(['sla-policies', 'show', fromFile.id], { json: false });
  t.equal(shown.code, 0, shown.stderr);
  t.match(shown.stdout, /match: +VIP/);
  t.match(shown.stdout, /calendar: +Europe\/Berlin: monday,tuesday,wednesday,thursday,friday 09:00-17:00/);
  const updated = await stack.deskctlJson([
    'sla-policies',
    'update',
    fromFile.id,
    '--description',
    'changed',
  ]);
  t.match(updated, { id: fromFile.id, description: 'changed', name: 'deskctl-vip' });

  const refused = await stack.deskctl([
    'sla-policies',
    'create',
    '--name',
    'Bad Name',
    '--targets',
    'high=1/2',
  ]);
  t.equal(refused.code, 1, 'the service refuses what the API refuses');
  t.match(refused.stderr, /VALIDATION_ERROR|body\./);
  const usage = await stack.deskctl(['sla-policies', 'create', '--name', 'x', '--targets', 'urgent=1']);
  t.equal(usage.code, 2, 'a malformed --targets is a usage error');
  t.match(usage.stderr, /--targets: .*urgent=1/);

  const unconfirmed = await stack.deskctl(['sla-policies', 'delete', fromFlags.id]);
  t.equal(unconfirmed.code, 2, 'no terminal and no --yes: refused');
  for (const p of [fromFile, fromFlags])
    t.same(await stack.deskctlJson(['sla-policies', 'delete', p.id, '--yes', '--as', admin.email]), {
      id: p.id,
      deleted: true,
    });
  const gone = await stack.deskctl(['sla-policies', 'show', fromFile.id]);
  t.equal(gone.code, 1);
  t.match(gone.stderr, /not found/i);

  // deskctl's changes are the admin RPC's: in the audit log, the acting admin (--as) as the actor.
  const audited = await eventually(
    async () => {
      const res = await admin.api.get(`/v1/events?resourceId=${fromFile.id}&type=system.config_changed`);
      const events = res.status === 200 ? (res.json.data.events as Json[]) : [];
      return events.length === 3 ? events : undefined;
    },
    { what: "the deskctl policy's three events in the audit log" },
  );
  t.equal(
    audited.filter((e) => e.actor?.email === admin.email).length,
    1,
    'the delete: by the admin named with --as, the others by the deskctl actor',
  );
});
