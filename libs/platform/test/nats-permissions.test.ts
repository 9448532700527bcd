import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream } from '@nats-io/jetstream';
import { natsNames } from '@support-desk/contracts';
import t from 'tap';
import {
  callRpc,
  connectNats,
  ensureStreams,
  type NatsConnection,
  runConsumer,
  serveRpc,
} from '../src/index.js';
import { eventually, startPrivateNats, type Teardownable, testLogger } from '../src/testing/index.js';

const SHIPPED = resolve(fileURLToPath(import.meta.url), '../../../../../deploy/nats.conf');
const PASSWORDS = {
  gateway: 'gw-pass',
  identity: 'id-pass',
  requests: 'rq-pass',
  audit: 'au-pass',
  webhooks: 'wh-pass',
};
type Service = keyof typeof PASSWORDS;

/**
 * The authorization block of the shipped deploy/nats.conf, on a private nats-server. (Debian's
 * nats-server 2.9 lacks `sync_interval`; the monitoring port and the store directory are the
 * test's own.)
 */
async function shippedNats(t: Teardownable) {
  const dir = mkdtempSync(join(tmpdir(), 'sd-nats-conf-'));
  const file = join(dir, 'nats.conf');
  const conf = readFileSync(SHIPPED, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(sync_interval|http_port|store_dir):/.test(line))
    .join('\n');
  writeFileSync(file, conf);
  const env = Object.fromEntries(
    Object.entries(PASSWORDS).map(([user, pass]) => [`NATS_${user.toUpperCase()}_PASSWORD`, pass]),
  );
  const server = await startPrivateNats(t, { configFile: file, env });
  const as = async (service: Service, password = PASSWORDS[service]) => {
    const url = `nats://${service}:${encodeURIComponent(password)}@127.0.0.1:${server.port}`;
    const nc = await connectNats({ url, name: service });
    t.teardown(() => nc.close());
    return nc;
  };
  return { as, server };
}

const names = natsNames('sd');
const rejected = (promise: Promise<unknown>) =>
  promise.then(
    () => false,
    () => true,
  );

t.test('the shipped NATS permissions: each service does its part and nothing more', async (t) => {
  const { as } = await shippedNats(t);
  const identity = await as('identity');
  const requests = await as('requests');
  const gateway = await as('gateway');
  const audit = await as('audit');
  await ensureStreams(identity, names);

  // Identity answers its RPC subjects; the others ask (replies come to their own inboxes).
  serveRpc(identity, names.rpc.getUser, async () => ({ found: false }));
  await identity.flush();
  t.same(
    await callRpc(requests, names.rpc.getUser, { id: 'usr_1' }),
    { found: false },
    'requests asks identity',
  );
  t.same(
    await callRpc(gateway, names.rpc.getUser, { id: 'usr_1' }),
    { found: false },
    'gateway asks identity',
  );

  // Only identity publishes credential notices and identity's events.
  const notice = JSON.stringify({ kind: 'settings_changed', at: new Date().toISOString() });
  const publish = (nc: NatsConnection, subject: string, body = notice) =>
    jetstream(nc).publish(subject, body, { timeout: 2000 });
  t.ok(await publish(identity, names.credentialNotices), 'identity publishes a notice');
  for (const [service, nc] of [
    ['requests', requests],
    ['gateway', gateway],
    ['audit', audit],
  ] as const) {
    t.ok(
      await rejected(publish(nc, names.credentialNotices)),
      `${service} cannot publish a credential notice`,
    );
  }
  t.ok(await publish(requests, names.eventSubject('request.created'), '{}'), 'requests publishes its events');
  t.ok(await rejected(publish(requests, names.eventSubject('user.deactivated'), '{}')), "not identity's");
  t.ok(
    await rejected(publish(audit, names.eventSubject('request.deleted'), '{}')),
    'audit publishes no event',
  );

  // Audit consumes the events stream with a durable pull consumer (deliveries to its own inbox).
  const seen: string[] = [];
  const consumer = await runConsumer({
    nc: audit,
    logger: testLogger(),
    stream: names.eventsStream,
    durable: 'audit-permissions',
    filterSubjects: [names.eventsWildcard],
    decode: (_data, subject) => subject,
    handle: async (subject) => {
      seen.push(subject);
    },
    deadLetter: async () => undefined,
  });
  t.teardown(() => consumer.stop());
  await eventually(() => seen.length > 0, { timeoutMs: 10_000, what: 'audit to receive the event' });
  t.same(seen, [names.eventSubject('request.created')], 'audit reads the events stream');

  // Operators (deskctl, as identity) ask audit about its dead letters; nobody else may ask.
  serveRpc(audit, names.deadLetters('audit'), async () => ({ total: 0, deadLetters: [] }));
  await audit.flush();
  t.same(
    await callRpc(identity, names.deadLetters('audit'), { op: 'list' }),
    { total: 0, deadLetters: [] },
    'deskctl asks audit about its dead letters',
  );
  t.ok(
    await rejected(callRpc(gateway, names.deadLetters('audit'), { op: 'replay', all: true }, 500)),
    'the gateway cannot',
  );
  // Webhooks publishes its subscriptions' changes (after audit's check: audit reads every event).
  const webhooks = await as('webhooks');
  t.ok(
    await publish(webhooks, names.eventSubject('system.config_changed'), '{}'),
    "webhooks publishes its subscriptions' changes",
  );
  t.ok(await rejected(publish(webhooks, names.eventSubject('request.created'), '{}')), 'and nothing else');
  t.ok(await rejected(publish(webhooks, names.credentialNotices)), 'no credential notice');

  // The settings console and deskctl (identity) change webhook subscriptions through webhooks'
  // admin subject; no other service may ask (nor answer in its place: the next test).
  serveRpc(webhooks, names.webhooksAdmin, async () => ({ ok: true, webhooks: [] }));
  await webhooks.flush();
  t.same(
    await callRpc(identity, names.webhooksAdmin, { op: 'list' }),
    { ok: true, webhooks: [] },
    'identity asks webhooks about its subscriptions',
  );
  t.ok(await rejected(callRpc(requests, names.webhooksAdmin, { op: 'list' }, 500)), 'requests cannot');
});

t.test(
  'no other service can answer identity lookups or webhooks admin, or read another service’s inbox',
  async (t) => {
    const { as } = await shippedNats(t);
    const gateway = await as('gateway');
    const requests = await as('requests');
    const errors: string[] = [];
    for (const [nc, subject] of [
      [requests, names.rpc.resolveApiKey],
      [gateway, '_INBOX_requests.>'],
      [requests, names.webhooksAdmin],
    ] as const) {
      const sub = nc.subscribe(subject, {
        callback: (err) => {
          if (err) errors.push(`${subject}: ${err.message}`);
        },
      });
      await nc.flush();
      await new Promise((r) => setTimeout(r, 200));
      sub.unsubscribe();
    }
    t.equal(errors.length, 3, 'every one of these subscriptions is refused by the server');
    t.match(errors.join('\n'), /Permissions Violation/i);
    // No impostor answered: a lookup with only the refused subscriber finds no responder.
    t.ok(await rejected(callRpc(gateway, names.rpc.resolveApiKey, { key: 'sd_x' }, 500)), 'no responder');
  },
);

t.test('a wrong password or no user is refused', async (t) => {
  const { as, server } = await shippedNats(t);
  t.ok(await rejected(as('requests', 'wrong')), 'wrong password');
  t.ok(
    await rejected(
      connectNats({ url: `nats://127.0.0.1:${server.port}`, name: 'anonymous' }).then((nc) => nc.flush()),
    ),
    'anonymous',
  );
});
