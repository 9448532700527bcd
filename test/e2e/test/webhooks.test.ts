// Webhooks end to end, through the gateway: an admin subscribes a real receiver on loopback, an
// agent works on a request, and the receiver gets each event signed per Standard Webhooks
// (verified with the specification's library), in order, without internal-note content; the
// subscription's own changes are in the audit log.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { cast } from '../src/actors.js';
import { eventually, startStack } from '../src/stack.js';

const stack = await startStack(t);
const { admin, agent } = await cast(stack);

interface Got {
  body: string;
  headers: Record<string, string>;
}
const received: Got[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({
      body: Buffer.concat(chunks).toString('utf8'),
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
    });
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => receiver.close(() => r())));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

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
});
