import { ConfigError } from '@support-desk/platform/core';
import t from 'tap';
import { computeSla, DEFAULT_SLA_POLICY, parseSlaPolicy, pickPolicy, slaView } from '../src/use-cases/sla.js';
import { createSlaMonitor } from '../src/use-cases/sla-monitor.js';
import { HOUR, harness, MINUTE, validBody } from './helpers.js';

t.test('policy table and status computation', async (t) => {
  const settings = { policy: DEFAULT_SLA_POLICY, warningRatio: 0.8 };
  const createdAt = new Date('2030-01-01T00:00:00Z');
  const open = { status: 'open' as const, firstResponseAt: null, clockStoppedAt: null };
  const fresh = (vip: boolean) =>
    computeSla(
      settings,
      {
        after: open,
        policy: pickPolicy(settings, [], { priority: 'critical', groupId: null, vip }),
        priority: 'critical',
        vip,
      },
      createdAt,
    );
  const s = fresh(false);
  t.equal(s.tier, 'standard:critical');
  t.equal(s.responseTarget.toISOString(), '2030-01-01T01:00:00.000Z');
  t.equal(s.resolutionTarget.toISOString(), '2030-01-01T04:00:00.000Z');
  t.equal(s.responseWarnAt.toISOString(), '2030-01-01T00:48:00.000Z');
  const v = fresh(true);
  t.equal(v.tier, 'vip:critical');
  t.equal(v.responseTarget.toISOString(), '2030-01-01T00:30:00.000Z');
  const at = (m: number) => new Date(createdAt.getTime() + m * MINUTE);
  const request = { ...open, sla: s, createdAt };
  const status = (now: Date, firstResponseAt: Date | null = null) =>
    slaView(settings, { ...request, firstResponseAt }, now).responseStatus;
  t.equal(status(at(10)), 'on_track');
  t.equal(status(at(50)), 'at_risk');
  t.equal(status(at(61)), 'breached');
  const answered = (m: number) =>
    computeSla(
      settings,
      { before: request, after: { ...open, firstResponseAt: at(m) }, priority: 'critical', vip: false },
      at(m),
    );
  t.equal(
    slaView(settings, { ...request, firstResponseAt: at(59), sla: answered(59) }, at(90)).responseStatus,
    'met',
  );
  t.equal(
    slaView(settings, { ...request, firstResponseAt: at(61), sla: answered(61) }, at(90)).responseStatus,
    'breached',
  );
  const custom = parseSlaPolicy('{"standard":{"low":{"responseMinutes":5}}}');
  t.equal(custom.standard.low.responseMinutes, 5);
  t.equal(custom.standard.low.resolutionMinutes, DEFAULT_SLA_POLICY.standard.low.resolutionMinutes);
  t.throws(() => parseSlaPolicy('{"gold":{}}'), ConfigError);
  t.throws(() => parseSlaPolicy('{"vip":{"low":{"responseMinutes":-1}}}'), ConfigError);
  t.throws(() => parseSlaPolicy('nope'), ConfigError);
});

t.test('monitor: warning then breach, exactly once with two replicas', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const a = createSlaMonitor(h.deps);
  const b = createSlaMonitor(h.deps);
  const both = async () => {
    const [x, y] = await Promise.all([a.runNow(), b.runNow()]);
    await h.relay.idle();
    return x + y;
  };
  const critical = (
    await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'critical' }))
  ).body.data.id;
  const answered = (
    await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'critical' }))
  ).body.data.id;
  const other = h.identity.person('agent');
  await h.call(other.principal, 'POST', `/v1/requests/${answered}/comments`, { content: 'on it' });

  t.equal(await both(), 0, 'nothing due yet');
  h.clock.advance(50 * MINUTE); // past 80% of the 1h response target
  t.equal(await both(), 1, 'one response warning');
  t.equal(await both(), 0, 'not again');
  let read = (await h.call(agent.principal, 'GET', `/v1/requests/${critical}`)).body.data;
  t.equal(read.sla.responseStatus, 'at_risk');
  h.clock.advance(15 * MINUTE); // past the response target
  t.equal(await both(), 1, 'one response breach');
  h.clock.advance(3 * HOUR); // past 80% and 100% of the 4h resolution target: breach only
  t.equal(await both(), 2, 'resolution breach for both requests, no late warning');
  t.equal(await both(), 0);
  read = (await h.call(agent.principal, 'GET', `/v1/requests/${critical}`)).body.data;
  t.same([read.sla.responseStatus, read.sla.resolutionStatus], ['breached', 'breached']);

  const events = await h.events({ resourceId: critical });
  const sla = events.filter((e) => e.type.startsWith('system.'));
  t.same(
    sla.map((e) => e.type),
    ['system.sla_warning', 'system.sla_breach', 'system.sla_breach'],
  );
  for (const e of sla) {
    t.equal(e.resourceType, 'system');
    t.equal(e.actor.id, 'system');
  }
  t.same(sla[0].changes?.['sla.responseStatus'], { from: 'on_track', to: 'at_risk' });
  t.same(sla[1].changes?.['sla.responseStatus'], { from: 'at_risk', to: 'breached' });
  const answeredEvents = await h.events({ resourceId: answered });
  t.same(
    answeredEvents
      .filter((e) => e.type.startsWith('system.'))
      .map((e) => e.changes && Object.keys(e.changes)[0]),
    ['sla.resolutionStatus'],
    'an answered request gets no response alerts',
  );

  // A priority change to a later target re-arms that target's alerts once.
  const low = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'critical' })))
    .body.data.id;
  h.clock.advance(50 * MINUTE);
  t.equal(await both(), 1, 'warning on the critical target');
  await h.call(agent.principal, 'PATCH', `/v1/requests/${low}`, { priority: 'low' });
  read = (await h.call(agent.principal, 'GET', `/v1/requests/${low}`)).body.data;
  t.equal(read.sla.tier, 'standard:low');
  t.equal(read.sla.responseStatus, 'on_track');
  h.clock.advance(20 * HOUR);
  t.equal(await both(), 1, 'warning on the new low target');
  await a.stop();
  await b.stop();
});

t.test('resolving stops the clocks; reopening resumes resolution', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const monitor = createSlaMonitor(h.deps);
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'critical' }))).body
    .data.id;
  h.clock.advance(30 * MINUTE);
  await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, { status: 'resolved', resolution: 'done' });
  h.clock.advance(10 * HOUR);
  t.equal(await monitor.runNow(), 0, 'no alerts while resolved');
  const read = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
  t.same(
    [read.sla.responseStatus, read.sla.resolutionStatus],
    ['met', 'met'],
    'resolution counts as the response',
  );
  await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, { status: 'in_progress' });
  const reopened = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
  t.equal(reopened.sla.resolutionStatus, 'on_track', '3.5h of the 4h remain');
  h.clock.advance(3 * HOUR + 20 * MINUTE);
  t.equal(await monitor.runNow(), 1, 'resolution warning after the resumed clock passes 80%');
  await monitor.stop();
});

t.test('a change racing the monitor keeps the SLA marker: the marker write is revisioned too', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const monitor = createSlaMonitor(h.deps);
  t.teardown(() => monitor.stop());
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'critical' }))).body
    .data.id;
  h.clock.advance(65 * MINUTE); // past the 1h response target
  // A writer that read the request before the monitor's pass and writes the SLA state it computed
  // from that read (as a PATCH does): the monitor's pass lands between its read and its write.
  let raced = false;
  const seenMarkers = await h.deps.requests.update(id, async (current) => {
    if (!raced) {
      raced = true;
      t.equal(await monitor.runNow(), 1, 'the monitor breaches in between');
    }
    return {
      write: { set: { title: 'Renamed meanwhile', sla: current.sla } },
      result: current.sla.responseBreachedAt,
    };
  });
  t.ok(seenMarkers, 'the writer lost the race once and decided again on the marked state');
  await h.relay.idle();
  const stored = await h.deps.requests.findVisible(id);
  t.equal(stored?.title, 'Renamed meanwhile', "the writer's change landed");
  t.ok(stored?.sla.responseBreachedAt, 'and the marker survived it');
  t.equal(stored?.sla.responseStatus, 'breached');
  t.equal(await monitor.runNow(), 0, 'so the breach is not emitted twice');
});

t.test('monitor between full scans: found by the minute they fall due, a moved target too', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  // Full scans only at start: every later pass reads by minute (slaDueMinute).
  const monitor = createSlaMonitor(h.deps, { fullScanEveryMs: 100 * HOUR, catchUpMinutes: 30 });
  t.teardown(() => monitor.stop());
  const slow = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'low' }))).body
    .data.id;
  const urgent = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ priority: 'critical' })))
    .body.data.id;
  t.equal(await monitor.runNow(), 0, 'the full scan at start: nothing due');
  // Every 10 minutes for 70 minutes: the critical request's warning (48 min) and breach (60 min).
  let emitted = 0;
  for (let step = 0; step < 7; step++) {
    h.clock.advance(10 * MINUTE);
    emitted += await monitor.runNow();
  }
  t.equal(emitted, 2, 'warning and breach of the critical response target');
  // The low request becomes critical: its response target (1 h after creation) is past already.
  await h.call(agent.principal, 'PATCH', `/v1/requests/${slow}`, { priority: 'critical' });
  h.clock.advance(MINUTE);
  t.equal(await monitor.runNow(), 1, 'the breach of the moved target, at the next pass');
  await h.relay.idle();
  const breaches = (await h.events({ type: 'system.sla_breach' })).map((e) => e.resourceId);
  t.same(breaches.sort(), [slow, urgent].sort());
});
