// SLA policies through the requests service's own HTTP app on the real store and NATS: the API
// (admins change, others read, bad input refused), the picking rule, business hours and pauses in
// a request's SLA block, the monitor on business time, and the policy events.
import t from 'tap';
import { createSlaMonitor } from '../src/use-cases/sla-monitor.js';
import { HOUR, harness, MINUTE, validBody } from './helpers.js';

const targets = (firstResponseMinutes: number, resolutionMinutes: number) =>
  Object.fromEntries(
    ['critical', 'high', 'medium', 'low'].map((p) => [p, { firstResponseMinutes, resolutionMinutes }]),
  );
const BERLIN_OFFICE = {
  timeZone: 'Europe/Berlin',
  hours: [{ days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], from: '09:00', to: '17:00' }],
  holidays: ['2030-06-10'],
};

t.test(
  'the API: admins change policies, agents and viewers read them, bad input changes nothing',
  async (t) => {
    const h = await harness(t);
    const admin = h.identity.person('admin').principal;
    const agent = h.identity.person('agent').principal;
    const viewer = h.identity.person('viewer').principal;

    const created = await h.call(admin, 'POST', '/v1/sla-policies', {
      name: 'office',
      targets: targets(60, 480),
      calendar: BERLIN_OFFICE,
    });
    t.equal(created.status, 201, created.body?.error?.message);
    const policy = created.body.data;
    t.match(policy, {
      name: 'office',
      position: 0,
      match: {},
      pauseStatuses: ['pending'],
      calendar: BERLIN_OFFICE,
    });
    t.match(created.headers.location, `/v1/sla-policies/${policy.id}`);

    for (const who of [agent, viewer]) {
      t.equal((await h.call(who, 'GET', `/v1/sla-policies/${policy.id}`)).status, 200);
      const list = (await h.call(who, 'GET', '/v1/sla-policies')).body.data;
      t.same(
        list.policies.map((p: { id: string }) => p.id),
        [policy.id],
      );
      t.equal(
        list.fallback.standard.critical.firstResponseMinutes,
        60,
        'the SLA_POLICY table as the fallback',
      );
      t.equal(
        (await h.call(who, 'POST', '/v1/sla-policies', { name: 'x', targets: targets(1, 2) })).status,
        403,
      );
      t.equal((await h.call(who, 'PATCH', `/v1/sla-policies/${policy.id}`, { position: 3 })).status, 403);
      t.equal((await h.call(who, 'DELETE', `/v1/sla-policies/${policy.id}`)).status, 403);
    }

    const refused = async (body: unknown, code: number, field: RegExp) => {
      const res = await h.call(admin, 'POST', '/v1/sla-policies', body);
      t.equal(res.status, code, JSON.stringify(body));
      t.match(res.body.error?.message, field);
    };
    await refused({ name: 'office', targets: targets(1, 2) }, 409, /named office already exists/);
    await refused(
      { name: 'mars', targets: targets(1, 2), calendar: { ...BERLIN_OFFICE, timeZone: 'Mars/Base' } },
      400,
      /timeZone.*Europe\/Berlin/,
    );
    await refused(
      {
        name: 'late',
        targets: targets(1, 2),
        calendar: { ...BERLIN_OFFICE, hours: [{ days: ['monday'], from: '09:00', to: '25:00' }] },
      },
      400,
      /HH:MM/,
    );
    await refused({ name: 'Bad Name', targets: targets(1, 2) }, 400, /lower-case/);
    await refused({ name: 'halfway', targets: { critical: targets(1, 2).critical } }, 400, /high/);
    await refused(
      { name: 'resolved', targets: targets(1, 2), pauseStatuses: ['resolved'] },
      400,
      /pauseStatuses/,
    );
    t.equal(
      (await h.call(admin, 'GET', '/v1/sla-policies')).body.data.policies.length,
      1,
      'nothing was stored',
    );

    const patched = await h.call(admin, 'PATCH', `/v1/sla-policies/${policy.id}`, {
      name: 'office-hours',
      pauseStatuses: ['pending', 'assigned'],
    });
    t.equal(patched.status, 200);
    t.match(patched.body.data, { name: 'office-hours', pauseStatuses: ['pending', 'assigned'] });
    const other = (
      await h.call(admin, 'POST', '/v1/sla-policies', { name: 'office', targets: targets(5, 10) })
    ).body.data;
    t.equal(other.position, 1, 'tried after the first, its old name free again');
    t.equal(
      (await h.call(admin, 'PATCH', `/v1/sla-policies/${other.id}`, { name: 'office-hours' })).status,
      409,
      'a taken name',
    );
    t.equal((await h.call(admin, 'DELETE', `/v1/sla-policies/${other.id}`)).status, 200);
    t.equal((await h.call(admin, 'GET', `/v1/sla-policies/${other.id}`)).status, 404);
    t.equal((await h.call(admin, 'DELETE', `/v1/sla-policies/${other.id}`)).status, 404, 'deleted once');

    // Every change is a system.config_changed event on the policy (audit and webhooks read them).
    const events = await h.events({ resourceId: policy.id });
    t.same(
      events.map((e) => [e.type, Object.keys(e.changes ?? {}).sort()]),
      [
        [
          'system.config_changed',
          [
            'slaPolicy.calendar',
            'slaPolicy.description',
            'slaPolicy.match',
            'slaPolicy.name',
            'slaPolicy.pauseStatuses',
            'slaPolicy.position',
            'slaPolicy.targets',
          ],
        ],
        ['system.config_changed', ['slaPolicy.name', 'slaPolicy.pauseStatuses']],
      ],
    );
    t.equal(events[1]!.actor.id, admin.userId);
    t.same(
      (await h.events({ resourceId: other.id })).map((e) => e.changes?.['slaPolicy.deleted']?.to ?? null),
      [null, true],
    );
  },
);

t.test('picking: first match by priority, group and VIP; the fallback otherwise', async (t) => {
  const h = await harness(t);
  const admin = h.identity.person('admin').principal;
  const vip = h.identity.person('agent', { isVip: true });
  const agent = h.identity.person('agent').principal;
  const group = h.identity.addGroup('Network');
  const make = async (body: Record<string, unknown>) => {
    const res = await h.call(admin, 'POST', '/v1/sla-policies', body);
    t.equal(res.status, 201, res.body?.error?.message);
    return res.body.data;
  };
  const network = await make({
    name: 'network',
    position: 2,
    match: { groups: [group.id] },
    targets: targets(10, 20),
  });
  const gold = await make({ name: 'gold', position: 1, match: { vip: true }, targets: targets(5, 10) });
  const urgent = await make({
    name: 'urgent',
    position: 3,
    match: { priorities: ['critical'] },
    targets: targets(15, 30),
  });
  const slaOf = async (who: typeof agent, body: Record<string, unknown>) => {
    const id = (await h.call(who, 'POST', '/v1/requests', validBody(body))).body.data.id;
    return { id, sla: (await h.call(agent, 'GET', `/v1/requests/${id}`)).body.data.sla };
  };
  t.match((await slaOf(vip.principal, { priority: 'critical' })).sla, {
    tier: 'gold:critical',
    policy: { id: gold.id, name: 'gold' },
  });
  t.match((await slaOf(agent, { priority: 'critical', assignedGroup: group.id })).sla, {
    tier: 'network:critical',
  });
  const plain = await slaOf(agent, { priority: 'critical' });
  t.match(plain.sla, { tier: 'urgent:critical', policy: { name: 'urgent' } });
  t.equal(
    Date.parse(plain.sla.responseTarget) - h.clock.now().getTime(),
    15 * MINUTE,
    'around the clock by default',
  );
  const fallback = await slaOf(agent, { priority: 'low' });
  t.match(fallback.sla, { tier: 'standard:low', policy: null }, 'no match: the SLA_POLICY table');

  // Changing a policy applies to new requests; an open one keeps its own until it is picked again.
  await h.call(admin, 'PATCH', `/v1/sla-policies/${urgent.id}`, { targets: targets(45, 90) });
  let read = (await h.call(agent, 'GET', `/v1/requests/${plain.id}`)).body.data.sla;
  t.equal(read.responseTarget, plain.sla.responseTarget, 'the open request keeps its target');
  t.equal(
    Date.parse((await slaOf(agent, { priority: 'critical' })).sla.responseTarget) - h.clock.now().getTime(),
    45 * MINUTE,
    'a new request gets the new target',
  );
  h.clock.advance(5 * MINUTE);
  await h.call(agent, 'PATCH', `/v1/requests/${plain.id}`, { assignedGroup: group.id });
  read = (await h.call(agent, 'GET', `/v1/requests/${plain.id}`)).body.data.sla;
  t.match(read, { tier: 'network:critical', policy: { id: network.id } }, 'a group change picks again');
  t.equal(
    Date.parse(read.responseTarget) - h.clock.now().getTime(),
    5 * MINUTE,
    'the 5 minutes used count against the new 10-minute target',
  );
});

t.test('business hours, pauses and the monitor on business time', async (t) => {
  const h = await harness(t);
  const admin = h.identity.person('admin').principal;
  const agent = h.identity.person('agent').principal;
  const other = h.identity.person('agent').principal;
  const monitor = createSlaMonitor(h.deps, { fullScanEveryMs: 100 * HOUR, catchUpMinutes: 30 });
  t.teardown(() => monitor.stop());
  await h.call(admin, 'POST', '/v1/sla-policies', {
    name: 'office',
    targets: targets(60, 8 * 60),
    calendar: BERLIN_OFFICE,
  });
  // Friday 2030-06-07 16:30 in Berlin (UTC+2); Monday 2030-06-10 is a holiday.
  h.clock.current = new Date('2030-06-07T14:30:00Z');
  const create = async () =>
    (await h.call(agent, 'POST', '/v1/requests', validBody())).body.data.id as string;
  const id = await create();
  const waiting = await create();
  const slaOf = async (rid: string) => (await h.call(agent, 'GET', `/v1/requests/${rid}`)).body.data.sla;
  let sla = await slaOf(id);
  t.equal(
    sla.responseTarget,
    '2030-06-11T07:30:00.000Z',
    '30 min on Friday, 30 on Tuesday (Monday a holiday)',
  );
  t.same(sla.response, { state: 'running', breachAt: '2030-06-11T07:30:00.000Z', remainingSeconds: 3600 });
  t.equal(await monitor.runNow(), 0);

  // Waiting on the customer from Friday 16:40: both clocks stand still.
  h.clock.advance(10 * MINUTE);
  t.equal((await h.call(agent, 'PATCH', `/v1/requests/${waiting}`, { status: 'pending' })).status, 200);
  sla = await slaOf(waiting);
  t.same(sla.response, { state: 'paused', breachAt: null, remainingSeconds: 50 * 60 });
  t.same(sla.resolution, { state: 'paused', breachAt: null, remainingSeconds: (8 * 60 - 10) * 60 });

  // Over the weekend and the holiday: no business time passes, no alert.
  h.clock.current = new Date('2030-06-11T07:00:00Z'); // Tuesday 09:00
  t.equal(await monitor.runNow(), 0, 'nothing due over the weekend');
  sla = await slaOf(id);
  t.equal(sla.response.remainingSeconds, 30 * 60);
  t.equal(sla.responseStatus, 'on_track');
  h.clock.current = new Date('2030-06-11T07:20:00Z'); // past 80 % of the hour
  t.equal(await monitor.runNow(), 1, 'the warning at 48 business minutes');
  h.clock.current = new Date('2030-06-11T07:31:00Z');
  t.equal(await monitor.runNow(), 1, 'the breach at 60 business minutes');
  sla = await slaOf(id);
  t.match(sla, { responseStatus: 'breached', response: { state: 'running', remainingSeconds: -60 } });
  t.equal((await slaOf(waiting)).responseStatus, 'on_track', 'the paused request is not breached');

  // The customer answers Tuesday 09:31: the clocks resume with what was left.
  await h.call(agent, 'PATCH', `/v1/requests/${waiting}`, { status: 'in_progress' });
  sla = await slaOf(waiting);
  t.same(sla.response, { state: 'running', breachAt: '2030-06-11T08:21:00.000Z', remainingSeconds: 50 * 60 });
  await h.call(other, 'POST', `/v1/requests/${waiting}/comments`, { content: 'on it' });
  sla = await slaOf(waiting);
  t.match(sla, {
    responseStatus: 'met',
    response: { state: 'stopped', breachAt: null, remainingSeconds: null },
  });
  const alerts = (await h.events({ resourceId: id })).filter((e) => e.type.startsWith('system.sla_'));
  t.same(
    alerts.map((e) => e.type),
    ['system.sla_warning', 'system.sla_breach'],
  );
  t.equal(
    (await h.events({ resourceId: waiting })).filter((e) => e.type.startsWith('system.sla_')).length,
    0,
  );
});
