import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, type Teardownable } from '@support-desk/platform/testing';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { allowedRanges, refusal } from '../src/events/destination.js';
import { createSender } from '../src/events/sender.js';
import { startReceiver } from './helpers.js';

// No test here waits for a timeout: they are only generous enough for a busy machine.
const options = (allowed = '') => ({
  connectTimeoutMs: 3000,
  responseTimeoutMs: 5000,
  bodyCapBytes: 16,
  allowedRanges: allowed,
  connectionsPerReceiver: 4,
});
/** A sender closed (its kept connections) at the test's end. */
function senderFor(t: Teardownable, allowed = '') {
  const sender = createSender(options(allowed));
  t.teardown(sender.close);
  return sender.send;
}
const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const delivery = (url: string) => ({ url, id: 'dlv_x', payload: '{}', secrets: [SECRET], at: new Date() });

t.test('private, loopback, link-local and metadata addresses are refused unless allowed', async (t) => {
  const none = allowedRanges('');
  for (const address of [
    '10.0.0.8',
    '172.20.1.1',
    '192.168.1.1',
    '127.0.0.1',
    '169.254.169.254',
    '100.100.100.200',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
  ]) {
    t.ok(refusal(address, none), `${address} refused`);
  }
  for (const address of ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']) {
    t.equal(refusal(address, none), null, `${address} allowed`);
  }
  const loopback = allowedRanges('127.0.0.0/8,::1/128');
  t.equal(refusal('127.0.0.1', loopback), null, 'allowed by configuration');
  t.ok(refusal('10.0.0.8', loopback), 'but only that range');
  t.throws(() => allowedRanges('127.0.0.1'), 'a range without a prefix length is a config error');
});

t.test(
  'only globally routable unicast: embedded IPv4, transition, site-local and reserved ranges',
  async (t) => {
    const none = allowedRanges('');
    for (const [address, why] of [
      ['::127.0.0.1', /loopback/], // IPv4-compatible (::/96): the loopback it embeds
      ['::a00:1', /private/],
      ['::ffff:0:7f00:1', /loopback/], // IPv4-translated (::ffff:0:0:0/96)
      ['::ffff:169.254.169.254', /link-local/],
      ['64:ff9b::a9fe:a9fe', /link-local/], // NAT64 (well-known prefix) of the metadata address
      ['64:ff9b::808:808', /NAT64/], // NAT64 of a public address: a translator the operator must allow
      ['64:ff9b:1::a00:1', /NAT64/], // local-use NAT64 (64:ff9b:1::/48)
      ['2002:7f00:1::1', /6to4/],
      ['2002:a00:1::1', /6to4/],
      ['2001::1', /Teredo/],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
      ['fec0::1', /site-local/],
      ['2001:2::1', /benchmarking/],
      ['3fff::1', /reserved/],
      ['4000::1', /not globally routable/], // outside 2000::/3, the global unicast space
      ['192.88.99.1', /reserved/], // the 6to4 relay anycast
      ['255.255.255.255', /broadcast/],
      ['192.0.0.8', /reserved/],
    ] as const) {
      t.match(refusal(address, none), why, `${address} refused`);
    }
    for (const address of ['8.8.8.8', '::ffff:93.184.215.14', '2a00:1450:4001:82b::200e']) {
      t.equal(refusal(address, none), null, `${address} allowed`);
    }
    const loopback = allowedRanges('127.0.0.0/8');
    t.equal(refusal('::ffff:127.0.0.1', loopback), null, 'an allowed IPv4 range admits its mapped form');
    t.match(refusal('::127.0.0.1', loopback), /IPv4-compatible/, 'not its deprecated compatible form');
    const nat64 = allowedRanges('64:ff9b::/96');
    t.equal(refusal('64:ff9b::808:808', nat64), null, 'an operator with a NAT64 translator allows it');
    t.match(refusal('64:ff9b::a00:1', nat64), /private/, 'the IPv4 it reaches must still be public');
  },
);

t.test('the sender refuses before connecting: metadata, private, a name resolving to loopback', async (t) => {
  const receiver = await startReceiver(t);
  const send = senderFor(t);
  const metadata = await send(delivery('http://169.254.169.254/latest/meta-data/'));
  t.match(metadata, { status: null, error: 'destination refused (link-local range)' });
  const privateNet = await send(delivery('http://10.1.2.3:8080/hook'));
  t.match(privateNet, { status: null, error: 'destination refused (private range)' });
  const compatible = await send(delivery(`http://[::127.0.0.1]:${receiver.port}/hook`));
  t.match(compatible, { status: null, error: 'destination refused (loopback range)' });
  const byName = await send(delivery(`http://localhost:${receiver.port}/hook`));
  t.match(byName, { status: null, error: 'destination refused (loopback range)' });
  t.notMatch(byName.error, /127\.0\.0\.1|::1/, 'the log never shows the address a name resolved to');
  t.equal(receiver.received.length, 0, 'nothing reached the receiver');

  const allowing = senderFor(t, '127.0.0.0/8,::1/128');
  const ok = await allowing(delivery(`http://localhost:${receiver.port}/hook`));
  t.equal(ok.status, 204, 'allowed by configuration, the same name is delivered to');
  const closed = await allowing(delivery(`http://localhost:${await freePort()}/hook`));
  t.match(closed, { status: null, error: /ECONNREFUSED/ });
  t.notMatch(closed.error, /127\.0\.0\.1|::1/, 'a failed connection names the host, not its address');
});

t.test('redirects are not followed; the body is read only up to the cap', async (t) => {
  const target = await startReceiver(t);
  const redirecting = await startReceiver(t, (_req, res) =>
    res.writeHead(307, { location: target.url }).end(),
  );
  const chatty = await startReceiver(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    // Far more than the cap, in pieces: the sender stops reading after the first.
    for (let i = 0; i < 200; i++) res.write('x'.repeat(1024));
    res.end();
  });
  const send = senderFor(t, '127.0.0.0/8');
  const redirected = await send(delivery(redirecting.url));
  t.equal(redirected.status, 307, 'the 3xx is the answer (a failure, retried)');
  t.equal(target.received.length, 0, 'the location was never requested');
  const capped = await send(delivery(chatty.url));
  t.equal(capped.status, 200);
});

t.test(
  'attempts to one receiver reuse its connections, signed as the Standard Webhooks library verifies',
  async (t) => {
    const sockets = new Set<unknown>();
    const bodies: { headers: Record<string, string>; body: string }[] = [];
    const server = createServer((req, res) => {
      sockets.add(req.socket);
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        bodies.push({ headers: req.headers as Record<string, string>, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const send = senderFor(t, '127.0.0.0/8');
    for (let i = 0; i < 10; i++) {
      const sent = await send({ ...delivery(url), id: `dlv_${i}`, payload: `{"n":${i}}` });
      t.equal(sent.status, 204);
    }
    // The pool's bound (`connectionsPerReceiver`: 4), not one per attempt.
    t.ok(sockets.size <= 4, `ten attempts one after another, ${sockets.size} connections`);
    const other = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
    await send({ ...delivery(url), secrets: [SECRET, other], payload: '{"two":true}' });
    const last = bodies.at(-1)!;
    t.equal(last.headers['webhook-signature'].split(' ').length, 2, 'one signature per secret');
    for (const secret of [SECRET, other])
      t.ok(new Webhook(secret).verify(last.body, last.headers), 'the library verifies each secret');
  },
);
