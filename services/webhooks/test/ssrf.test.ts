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
});
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

t.test('the sender refuses before connecting: metadata, private, a name resolving to loopback', async (t) => {
  const receiver = await startReceiver(t);
  const send = createSender(options());
  const metadata = await send(delivery('http://169.254.169.254/latest/meta-data/'));
  t.match(metadata, { status: null, error: /destination refused: 169\.254\.169\.254 .*link-local/ });
  const privateNet = await send(delivery('http://10.1.2.3:8080/hook'));
  t.match(privateNet, { status: null, error: /private/ });
  const byName = await send(delivery(`http://localhost:${receiver.port}/hook`));
  t.match(byName, { status: null, error: /destination refused: localhost resolves to .*loopback/ });
  t.equal(receiver.received.length, 0, 'nothing reached the receiver');

  const allowing = createSender(options('127.0.0.0/8,::1/128'));
  const ok = await allowing(delivery(`http://localhost:${receiver.port}/hook`));
  t.equal(ok.status, 204, 'allowed by configuration, the same name is delivered to');
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
  const send = createSender(options('127.0.0.0/8'));
  const redirected = await send(delivery(redirecting.url));
  t.equal(redirected.status, 307, 'the 3xx is the answer (a failure, retried)');
  t.equal(target.received.length, 0, 'the location was never requested');
  const capped = await send(delivery(chatty.url));
  t.equal(capped.status, 200);
});
