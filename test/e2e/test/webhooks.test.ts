// Webhooks end to end, through the gateway: an admin subscribes a real receiver on loopback, an
// agent works on a request, and the receiver gets each event signed per Standard Webhooks
// (verified with the specification's library), in order, without internal-note content; the
// subscription's own changes are in the audit log.
import { spawn } from 'node:child_process';
import { startReceiver } from '@support-desk/platform/testing';
import { Webhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import { cast } from '../src/actors.js';
import { DESKCTL, eventually, startStack } from '../src/stack.js';

const stack = await startStack(t);
const { admin, agent } = await cast(stack);

const { url, received } = await startReceiver(t);

t.test('a subscription receives the events of a request, signed and in order', async (t) => {
  const created = await admin.api.post('/v1/webhooks', { url, events: ['request.*'], description: 'e2e' });
  t.equal(created.status, 201, created.text);
  const { id, secret } = created.json.data as { id: string; secret: string };
  t.equal((await agent.api.get('/v1/webhooks')).status, 403, 'admin scope only');

  const request = await agent.api.post('/v1/requests', {
    title: 'Printer',
    description: 'Jammed',
    priority: 'low',
  });
  const requestId = request.json.data.id as string;
  await agent.api.post(`/v1/requests/${requestId}/comments`, {
    content: 'staff-only detail',
    isInternal: true,
  });
  await agent.api.patch(`/v1/requests/${requestId}`, { priority: 'high' });

  await eventually(() => received.length >= 3, { what: 'three deliveries' });
  const wh = new Webhook(secret);
  const payloads = received.map((r) => wh.verify(r.body, r.headers) as { type: string; webhookId: string });
  t.same(
    payloads.map((p) => p.type),
    ['request.created', 'request.comment_added', 'request.priority_changed'],
    'in order',
  );
  t.ok(payloads.every((p) => p.webhookId === id));
  t.notMatch(received.map((r) => r.body).join(), /staff-only detail/, 'internal-note content never sent');
  // Each delivery carries the request as it is after the change: a new ticket elsewhere needs no
  // second call (and no second credential) to read it.
  const snapshots = payloads.map((p) => (p as { snapshot?: Record<string, any> }).snapshot);
  t.equal(snapshots[0]?.description, 'Jammed', 'request.created: the description');
  t.same(snapshots[0]?.requester, { id: agent.id, email: agent.email, name: agent.name, isVip: false });
  t.equal(snapshots[1]?.commentCount, 0, 'an internal note is not even counted');
  t.equal(snapshots[2]?.priority, 'high', 'the state after the change');

  const log = await eventually(async () => {
    const res = await admin.api.get(`/v1/webhooks/${id}/deliveries?status=succeeded`);
    return res.json?.data?.deliveries?.length === 3 && res.json.data.deliveries;
  });
  t.same(
    (log as { id: string }[]).map((d) => d.id).sort(),
    received.map((r) => r.headers['webhook-id']).sort(),
    'the log names each webhook-id',
  );

  const audit = await eventually(async () => {
    const res = await admin.api.get(`/v1/events?type=system.config_changed&resourceType=system`);
    const events = (res.json?.data?.events ?? []) as { resourceId: string }[];
    return events.some((e) => e.resourceId === id) && events;
  });
  t.ok(audit, 'the subscription change is in the audit log');

  // Removed, so no later file on a shared stack has its events delivered to this file's receiver.
  const removed = await admin.api.delete(`/v1/webhooks/${id}`);
  t.same(removed.json?.data, { id, deleted: true }, 'deleted');
});

/** deskctl commands in one process (`deskctl batch`: each deskctl process connects first). */
async function batch(...lines: string[][]) {
  const stdin = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  const r = await stack.deskctl(['batch'], { stdin, json: false });
  const answers = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { ok: boolean; result?: any; error?: string });
  if (answers.length !== lines.length) throw new Error(`batch: ${r.stdout} ${r.stderr}`);
  return answers;
}

t.test('deskctl webhooks: every command against the running webhooks service', async (t) => {
  const receiver = await startReceiver(t);
  const as = ['--as', admin.email];
  const create = ['webhooks', 'create', '--url', receiver.url, '--events', 'user.*,request.created', ...as];
  const [made, again, listed] = await batch(
    [...create, '--description', 'deskctl e2e'],
    [...create, '--if-not-exists'],
    ['webhooks', 'list', '--limit', '100'],
  );
  t.match(made.result, { url: receiver.url, events: ['user.*', 'request.created'], active: true });
  t.match(made.result.secret, /^whsec_/, 'the secret, once');
  const id = made.result.id as string;
  t.match(again.result, { id, existed: true }, '--if-not-exists: the existing one');
  t.notOk('secret' in again.result, 'without its secret');
  t.ok(
    (listed.result.webhooks as { id: string }[]).some((w) => w.id === id),
    'listed',
  );

  const [shown, disabled, enabled, ping] = await batch(
    ['webhooks', 'show', id],
    ['webhooks', 'update', id, '--disable', ...as],
    ['webhooks', 'update', id, '--enable', ...as],
    ['webhooks', 'ping', id],
  );
  t.match(shown.result, { id, description: 'deskctl e2e' });
  t.match(disabled.result, { active: false, disabledReason: 'manual' });
  t.match(enabled.result, { active: true });
  await eventually(() => receiver.received.length >= 1, { what: 'the ping' });
  t.match(new Webhook(made.result.secret).verify(receiver.received[0].body, receiver.received[0].headers), {
    type: 'webhook.ping',
    webhookId: id,
  });
  await eventually(async () => {
    const res = await admin.api.get(`/v1/webhooks/${id}/deliveries?status=succeeded`);
    return res.json?.data?.deliveries?.length === 1;
  });
  const [log, replayed, rotated] = await batch(
    ['webhooks', 'deliveries', id, '--event-type', 'webhook.ping'],
    ['webhooks', 'replay', id, ping.result.id],
    ['webhooks', 'rotate-secret', id, ...as],
  );
  t.match(log.result.deliveries, [{ id: ping.result.id, status: 'succeeded' }], 'the delivery log');
  t.match(replayed.result, { id: ping.result.id, status: 'pending' });
  await eventually(() => receiver.received.length >= 2, { what: 'the replay' });
  t.match(rotated.result.secret, /^whsec_/);
  t.ok(rotated.result.previousSecretExpiresAt, 'the previous secret signs during the overlap');

  // Exit codes and errors of single commands.
  const refused = await stack.deskctl([
    'webhooks',
    'create',
    '--url',
    'http://10.0.0.1/hook',
    '--events',
    'user.*',
  ]);
  t.equal(refused.code, 1);
  t.match(JSON.parse(refused.stderr), {
    error: { code: 'VALIDATION_ERROR', message: /body\.url.*not an allowed destination/ },
  });
  const unconfirmed = await stack.deskctl(['webhooks', 'delete', id]);
  t.equal(unconfirmed.code, 2, 'delete asks first (no terminal here: refused without --yes)');
  const gone = await stack.deskctl(['webhooks', 'delete', id, '--yes', ...as]);
  t.same(gone.json, { id, deleted: true });
  const [shownAfter] = await batch(['webhooks', 'show', id]);
  t.match(shownAfter, { ok: false, error: /Webhook not found/ });

  type Listed = { actor: { email: string }; metadata?: { source: string } };
  const events = await eventually(async () => {
    const res = await admin.api.get(`/v1/events?resourceId=${id}`);
    const listed = (res.json?.data?.events ?? []) as Listed[];
    return listed.length >= 5 ? listed : null;
  });
  t.equal(events.length, 5, 'create, disable, enable, rotate, delete in the audit log');
  t.ok(
    events.every((e) => e.actor.email === admin.email),
    'each with the acting admin',
  );
});

/**
 * `deskctl webhooks listen` as an operator runs it: its own process, its JSON lines read as they
 * come, stopped with SIGINT (bounded: SIGKILL after 60 s, which fails the test's exit-code check).
 */
function listen(t: Test, args: string[]) {
  const child = spawn(process.execPath, [DESKCTL, 'webhooks', 'listen', ...args, '--json'], {
    env: { ...process.env, ...stack.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code))).finally(() =>
    clearTimeout(killer),
  );
  // A failed wait still stops it (and so deletes its subscription on this shared stack).
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    return exited;
  });
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{"'))
      .map((l) => JSON.parse(l) as Record<string, any>);
  return { child, exited, lines, output: () => `${stdout}\n${stderr}` };
}

t.test('deskctl webhooks listen forwards verified deliveries to a local receiver; trigger', async (t) => {
  // The receiver drops the first connection (as a receiver that is down would), then answers 201.
  const local = await startReceiver(t, (_q, res, n) =>
    n === 1 ? res.socket?.destroy() : res.writeHead(201, { 'content-type': 'text/plain' }).end('taken'),
  );
  const listener = listen(t, ['--forward-to', local.url, '--events', 'request.created', '--as', admin.email]);
  const ready = await eventually(() => listener.lines().find((l) => l.listening)?.listening, {
    what: 'the listener ready',
    timeoutMs: 60_000,
  });
  t.match(ready, { webhookId: /^whk_/, url: /^http:\/\/127\.0\.0\.1:\d+\/$/, events: ['request.created'] });
  t.match(ready.secret, /^whsec_/, 'the signing secret, printed once');
  const shown = await stack.deskctlJson(['webhooks', 'show', ready.webhookId]);
  t.match(shown, { url: ready.url, description: /deskctl webhooks listen \(temporary/ });
  t.ok(Date.parse(shown.expiresAt) > Date.now() + 23 * 3_600_000, 'expires a day ahead if never deleted');

  // A test event: the local receiver is "down" for its first attempt; the service is answered 502
  // and retries (5 s later, as against the receiver itself), then the receiver's 201 goes back.
  const trigger = await stack.deskctlJson([
    'webhooks',
    'trigger',
    'request.created',
    '--webhook',
    ready.webhookId,
  ]);
  t.match(trigger, {
    event: { id: /^evt_/, type: 'request.created' },
    deliveries: [{ webhookId: ready.webhookId }],
  });
  const deliveries = () => listener.lines().filter((l) => l.deliveryId);
  const [down, retried] = await eventually(() => deliveries().length >= 2 && deliveries(), {
    what: 'the test event, its retry',
    timeoutMs: 30_000,
  });
  t.match(down, {
    type: 'request.created',
    eventId: trigger.event.id,
    test: true,
    answered: 502,
    error: /^no answer: /,
  });
  t.match(retried, { deliveryId: down.deliveryId, eventId: trigger.event.id, status: 201, answered: 201 });
  t.ok(retried.latencyMs >= 0, 'the local latency');
  const log = await stack.deskctlJson(['webhooks', 'deliveries', ready.webhookId]);
  t.match(log.deliveries, [
    { id: down.deliveryId, status: 'succeeded', attempts: [{ status: 502 }, { status: 201 }] },
  ]);

  // A real event: a request created through the API.
  const created = await agent.api.post('/v1/requests', {
    title: `Listen ${stack.tag}`,
    description: 'local',
    priority: 'low',
  });
  t.equal(created.status, 201);
  const real = await eventually(() => deliveries().find((l) => l.type === 'request.created' && !l.test), {
    what: 'the real event (requests, its outbox, JetStream, the intake, a delivery)',
    timeoutMs: 60_000,
  });
  t.match(real, { status: 201, eventId: /^evt_/ });
  t.notOk(real.test, 'not a test');
  const forwarded = local.received.find((r) => r.headers['webhook-id'] === real.deliveryId)!;
  t.ok(forwarded, 'the receiver got it, with its original webhook-id');
  const payload = new Webhook(ready.secret).verify(forwarded.body, forwarded.headers) as Record<string, any>;
  t.match(payload, { id: real.eventId, type: 'request.created', snapshot: { id: created.json.data.id } });
  t.equal(forwarded.headers['content-type'], 'application/json', 'the original headers');

  // Not signed by the service: refused, answered 400, not forwarded.
  const before = local.received.length;
  const forged = await fetch(ready.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,bm90IGEgc2lnbmF0dXJl',
    },
    body: JSON.stringify({ type: 'request.created', id: 'evt_forged' }),
  });
  t.equal(forged.status, 400);
  const refused = await eventually(() => listener.lines().find((l) => l.refused), {
    what: 'the refusal line',
  });
  t.match(refused, { deliveryId: 'msg_forged', refused: /signature/, answered: 400, eventId: null });
  t.equal(local.received.length, before, 'nothing forwarded');

  listener.child.kill('SIGINT');
  t.equal(await listener.exited, 0, `stopped cleanly: ${listener.output()}`);
  t.match(listener.output(), /"deleted": true/);
  const after = await stack.deskctl(['webhooks', 'show', ready.webhookId]);
  t.equal(after.code, 1, 'the temporary subscription is gone');
  t.match(after.stderr, /Webhook not found/);
});
