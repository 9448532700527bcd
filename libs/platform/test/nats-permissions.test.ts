// The shipped NATS permissions (deploy/nats.conf, and the same users in the Helm example), on a
// real private nats-server with real users: every service does its part, and of JetStream's API
// only its part. No service may create, change, delete or purge a stream (so no stream that
// republishes onto another service's subjects), delete a message, or read, ack, change or delete
// another service's consumer; the streams come from the provisioning step alone.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import { natsNames, type ServiceName } from '@support-desk/contracts';
import t, { type Test } from 'tap';
import YAML from 'yaml';
import {
  awaitStreams,
  callRpc,
  connectNats,
  consumerAckFloor,
  encodeJson,
  ensureConsumer,
  type NatsConnection,
  provisionStreams,
  runConsumer,
  serveRpc,
} from '../src/subpaths/messaging.js';
import {
  eventually,
  startPrivateNats,
  type Teardownable,
  testLogger,
  testSigner,
  testVerifier,
} from '../src/testing/index.js';

const DEPLOY = resolve(fileURLToPath(import.meta.url), '../../../../../deploy');
const USERS = ['provisioner', 'gateway', 'identity', 'requests', 'audit', 'webhooks'] as const;
type User = (typeof USERS)[number];
const password = (user: User) => `${user}-pass`;
const names = natsNames('sd');
const { eventsStream: EVENTS, noticesStream: NOTICES } = names;

/** The durable consumers of the services, as they name them by default (and nats.conf does). */
const DURABLES: Record<string, { service: ServiceName; filter: string }> = {
  audit: { service: 'audit', filter: names.eventsWildcard },
  webhooks: { service: 'webhooks', filter: names.eventsWildcard },
  'requests-read-model-users': { service: 'requests', filter: 'sd.events.user.>' },
  'requests-read-model-groups': { service: 'requests', filter: names.eventSubject('system.config_changed') },
};

/**
 * deploy/nats.conf as shipped, less the monitoring port, the store directory (the test's server
 * has its own, given on the command line with its port) and the fsync setting.
 */
const shippedConf = () =>
  readFileSync(join(DEPLOY, 'nats.conf'), 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(sync_interval|http_port|store_dir):/.test(line))
    .join('\n');

/**
 * The Helm example's users (`config.merge.authorization`) as a server configuration: the NATS
 * chart writes them as JSON, a password `<< $VAR >>` unquoted (a variable of the environment).
 */
function helmExampleConf() {
  const values = YAML.parse(readFileSync(join(DEPLOY, 'helm/examples/nats-values.yaml'), 'utf8'));
  const authorization = JSON.stringify(values.config.merge.authorization).replace(
    /"<< (\$[A-Z_]+) >>"/g,
    '$1',
  );
  return `jetstream {}\nauthorization: ${authorization}\n`;
}

async function privateNats(t: Teardownable, conf: string) {
  const file = join(mkdtempSync(join(tmpdir(), 'sd-nats-conf-')), 'nats.conf');
  writeFileSync(file, conf);
  const env = Object.fromEntries(USERS.map((u) => [`NATS_${u.toUpperCase()}_PASSWORD`, password(u)]));
  const server = await startPrivateNats(t, { configFile: file, env });
  const as = async (user: User, pass = password(user)) => {
    const url = `nats://${user}:${encodeURIComponent(pass)}@127.0.0.1:${server.port}`;
    const nc = await connectNats({ url, name: user });
    t.teardown(() => nc.close());
    return nc;
  };
  return { as, server };
}

const rejected = (promise: Promise<unknown>) =>
  promise.then(
    () => false,
    () => true,
  );

/** Whether the server refuses `nc` this request for want of permission (not for any other reason). */
const refused = (nc: NatsConnection, subject: string, body: unknown = {}) =>
  nc.request(subject, encodeJson(body), { timeout: 2000 }).then(
    () => false,
    (err: Error) => /permission/i.test(`${err.message} ${String(err.cause ?? '')}`),
  );

/** A stream that would copy every event onto the webhooks admin subject (a forged admin request). */
const republishing = {
  name: 'EVIL',
  subjects: ['evil.>'],
  republish: { src: 'sd.events.>', dest: names.webhooksAdmin },
};

for (const [label, conf] of [
  ['deploy/nats.conf', shippedConf],
  ['the Helm example (nats-values.yaml)', helmExampleConf],
] as const) {
  t.test(`${label}: what every service needs works`, async (t) => {
    const { as } = await privateNats(t, conf());
    const provisioner = await as('provisioner');
    t.same(await provisionStreams(provisioner, names), { events: 'created', notices: 'created' });
    t.same(await provisionStreams(provisioner, names), { events: 'unchanged', notices: 'unchanged' });
    const nc = Object.fromEntries(
      await Promise.all(USERS.map(async (u) => [u, await as(u)] as const)),
    ) as Record<User, NatsConnection>;
    for (const service of ['gateway', 'identity', 'requests', 'audit', 'webhooks'] as const) {
      await awaitStreams(nc[service], names, service === 'gateway' ? ['notices'] : ['events'], testLogger());
    }
    t.pass('each service sees the streams it uses');

    // Identity answers its RPC; the gateway and requests ask what they need.
    const verifier = testVerifier();
    for (const name of ['resolveApiKey', 'getUser', 'getGroup', 'getOAuthClient', 'getSettings'] as const)
      serveRpc(nc.identity, names.rpc[name], async () => ({ found: false }), {
        verifier,
        callers: ['gateway', 'requests'],
      });
    await nc.identity.flush();
    const ask = (as: 'gateway' | 'requests', name: keyof typeof names.rpc) =>
      callRpc(nc[as], names.rpc[name], {}, { signer: testSigner(as), timeoutMs: 2000 });
    for (const name of ['resolveApiKey', 'getUser', 'getOAuthClient', 'getSettings'] as const)
      t.same(await ask('gateway', name), { found: false }, `the gateway asks ${name}`);
    for (const name of ['getUser', 'getGroup'] as const)
      t.same(await ask('requests', name), { found: false }, `requests asks ${name}`);
    t.ok(await rejected(ask('requests', 'resolveApiKey')), 'requests may not resolve API keys');
    t.ok(await rejected(ask('gateway', 'getGroup')), 'the gateway asks no group');

    // Every durable consumer, by its own service: created (with its filter), read, acked.
    const seen: Record<string, string[]> = {};
    for (const [durable, { service, filter }] of Object.entries(DURABLES)) {
      seen[durable] = [];
      const consumer = await runConsumer({
        nc: nc[service],
        logger: testLogger(),
        stream: EVENTS,
        durable,
        filterSubjects: [filter],
        decode: (_data, subject) => subject,
        handle: async (subject) => {
          seen[durable]!.push(subject);
        },
        deadLetter: async () => undefined,
      });
      t.teardown(() => consumer.stop());
      // A restart finds it and updates its settings (the same create request, as an update).
      await ensureConsumer(nc[service], EVENTS, durable, [filter], 20_000);
    }
    t.pass('each service creates, and on restart updates, its own durable consumers');
    // The gateway's ordered consumer of the notices, as every replica runs it.
    const notices = await (
      await jetstream(nc.gateway).consumers.get(NOTICES, {
        filter_subjects: names.credentialNotices,
        deliver_policy: DeliverPolicy.New,
      })
    ).consume();
    t.teardown(() => notices.close());
    const noticesSeen: string[] = [];
    void (async () => {
      for await (const m of notices) noticesSeen.push(m.subject);
    })();

    // Each producer publishes its own events (its outbox relay's JetStream publish).
    const publish = (as: User, subject: string) =>
      jetstream(nc[as]).publish(subject, '{}', { timeout: 2000 });
    const published: [User, string][] = [
      ['identity', names.eventSubject('user.created')],
      ['identity', names.eventSubject('system.config_changed')],
      ['identity', names.eventSubject('system.sync_completed')],
      ['requests', names.eventSubject('request.created')],
      ['requests', names.eventSubject('system.sla_breach')],
      // Its SLA policy changes (slp_ resources; EVENT_PRODUCERS narrows it to those).
      ['requests', names.eventSubject('system.config_changed')],
      ['webhooks', names.eventSubject('system.config_changed')],
    ];
    for (const [as, subject] of published) t.ok(await publish(as, subject), `${as} publishes ${subject}`);
    t.ok(await publish('identity', names.credentialNotices), 'identity publishes a credential notice');
    for (const [as, subject] of [
      ['requests', names.eventSubject('user.role_changed')],
      ['webhooks', names.eventSubject('request.created')],
      ['audit', names.eventSubject('request.deleted')],
      ['gateway', names.eventSubject('user.created')],
      ['provisioner', names.eventSubject('user.created')],
      ['requests', names.credentialNotices],
      ['webhooks', names.credentialNotices],
      ['gateway', names.credentialNotices],
    ] as const)
      t.ok(await rejected(publish(as, subject)), `${as} may not publish ${subject}`);

    const all = published.map(([, subject]) => subject);
    await eventually(
      () =>
        seen.audit!.length === all.length &&
        seen.webhooks!.length === all.length &&
        seen['requests-read-model-users']!.length === 1 &&
        seen['requests-read-model-groups']!.length === 3 &&
        noticesSeen.length === 1,
      { what: 'every consumer to read what it reads' },
    );
    t.same(seen.audit, all, 'audit reads every event');
    t.same(seen.webhooks, all, 'webhooks reads every event');
    t.same(seen['requests-read-model-users'], [names.eventSubject('user.created')], 'requests: user events');
    t.same(seen['requests-read-model-groups']!.length, 3, 'requests: configuration changes');
    t.same(noticesSeen, [names.credentialNotices], 'every gateway reads the notices');
    await eventually(async () => (await consumerAckFloor(nc.audit, EVENTS, 'audit', 0)()) === all.length, {
      what: "audit's acks to land",
    });
    t.pass('audit acks its deliveries and reads its consumer');
  });

  t.test(`${label}: no service may drive the rest of JetStream's API`, async (t) => {
    const { as } = await privateNats(t, conf());
    await provisionStreams(await as('provisioner'), names);
    const identity = await as('identity');
    await jetstream(identity).publish(names.eventSubject('user.created'), '{}');
    const api = (op: string) => `$JS.API.${op}`;
    const services = ['gateway', 'identity', 'requests', 'audit', 'webhooks'] as const;
    for (const service of services) {
      await t.test(service, async (t: Test) => {
        const nc = await as(service);
        for (const stream of [EVENTS, NOTICES]) {
          t.ok(
            await refused(nc, api(`STREAM.CREATE.${stream}`), { name: stream, subjects: ['x.>'] }),
            `create ${stream}`,
          );
          t.ok(
            await refused(nc, api(`STREAM.UPDATE.${stream}`), { name: stream, subjects: ['sd.>'] }),
            `update ${stream}`,
          );
          t.ok(await refused(nc, api(`STREAM.DELETE.${stream}`)), `delete ${stream}`);
          t.ok(await refused(nc, api(`STREAM.PURGE.${stream}`)), `purge ${stream}`);
          t.ok(
            await refused(nc, api(`STREAM.MSG.DELETE.${stream}`), { seq: 1 }),
            `delete a message of ${stream}`,
          );
          t.ok(await refused(nc, api(`STREAM.MSG.GET.${stream}`), { seq: 1 }), `read a message of ${stream}`);
          t.ok(
            await refused(nc, api(`CONSUMER.CREATE.${stream}.spy.sd.>`), {
              stream_name: stream,
              config: { name: 'spy', filter_subject: 'sd.>' },
            }),
            `a consumer of its own on ${stream}`,
          );
        }
        t.ok(
          await refused(nc, api('STREAM.CREATE.EVIL'), republishing),
          'a stream that republishes onto another service’s subject',
        );
        t.ok(
          await refused(nc, api(`STREAM.UPDATE.${EVENTS}`), {
            name: EVENTS,
            subjects: [names.eventsWildcard],
            republish: republishing.republish,
          }),
          'republish added to the events stream',
        );
        t.ok(await refused(nc, api('INFO')), "the account's JetStream information");
        t.ok(await refused(nc, api('STREAM.LIST')), 'the list of streams');
        for (const [durable, { service: owner, filter }] of Object.entries(DURABLES)) {
          const mine = owner === service;
          const what = mine ? `its own ${durable}` : `${owner}'s ${durable}`;
          t.ok(await refused(nc, api(`CONSUMER.DELETE.${EVENTS}.${durable}`)), `delete ${what}`);
          if (mine) {
            t.ok(
              await refused(nc, api(`CONSUMER.CREATE.${EVENTS}.${durable}.sd.>`), {
                stream_name: EVENTS,
                config: { durable_name: durable, filter_subject: 'sd.>' },
              }),
              `widen the filter of ${what}`,
            );
            continue;
          }
          t.ok(
            await refused(nc, api(`CONSUMER.MSG.NEXT.${EVENTS}.${durable}`), { batch: 1 }),
            `pull from ${what}`,
          );
          t.ok(await refused(nc, api(`CONSUMER.INFO.${EVENTS}.${durable}`)), `read ${what}`);
          t.ok(
            await refused(nc, api(`CONSUMER.CREATE.${EVENTS}.${durable}.${filter}`), {
              stream_name: EVENTS,
              config: { durable_name: durable, filter_subject: filter },
            }),
            `create or change ${what}`,
          );
          t.ok(await refused(nc, `$JS.ACK.${EVENTS}.${durable}.1.1.1.1.0`, ''), `ack ${what}'s deliveries`);
        }
      });
    }
    await t.test('provisioner', async (t: Test) => {
      const nc = await as('provisioner');
      t.ok(await refused(nc, api(`STREAM.DELETE.${EVENTS}`)), 'it deletes no stream');
      t.ok(await refused(nc, api(`STREAM.PURGE.${EVENTS}`)), 'nor purges one');
      t.ok(await refused(nc, api('STREAM.CREATE.EVIL'), republishing), 'nor makes another');
      t.ok(await refused(nc, api(`CONSUMER.MSG.NEXT.${EVENTS}.audit`), { batch: 1 }), 'it reads no event');
    });
  });

  t.test(`${label}: operator requests, answers and inboxes`, async (t) => {
    const { as } = await privateNats(t, conf());
    const identity = await as('identity');
    const gateway = await as('gateway');
    const requests = await as('requests');
    const audit = await as('audit');
    const webhooks = await as('webhooks');
    const operator = { verifier: testVerifier(), callers: ['identity'] as const };
    const askAs = (nc: NatsConnection, as: ServiceName, subject: string) =>
      callRpc(nc, subject, { op: 'list' }, { signer: testSigner(as), timeoutMs: 500 });
    for (const [service, nc] of [
      ['audit', audit],
      ['requests', requests],
      ['webhooks', webhooks],
    ] as const)
      serveRpc(nc, names.deadLetters(service), async () => ({ total: 0, deadLetters: [] }), operator);
    serveRpc(webhooks, names.webhooksAdmin, async () => ({ ok: true, webhooks: [] }), operator);
    serveRpc(requests, names.requestsAdmin, async () => ({ ok: true, deleted: [] }), operator);
    await Promise.all([audit.flush(), requests.flush(), webhooks.flush()]);
    for (const service of ['audit', 'requests', 'webhooks'] as const)
      t.same(
        await askAs(identity, 'identity', names.deadLetters(service)),
        { total: 0, deadLetters: [] },
        `deskctl (identity) asks ${service} about its dead letters`,
      );
    t.same(
      await askAs(identity, 'identity', names.webhooksAdmin),
      { ok: true, webhooks: [] },
      'and webhooks',
    );
    t.same(
      await askAs(identity, 'identity', names.requestsAdmin),
      { ok: true, deleted: [] },
      'and requests (SLA policies, the trash, jobs)',
    );
    for (const [nc, who] of [
      [gateway, 'gateway'],
      [requests, 'requests'],
      [audit, 'audit'],
    ] as const) {
      t.ok(
        await rejected(askAs(nc, who, names.deadLetters('webhooks'))),
        `${who} may not ask about dead letters`,
      );
      t.ok(await rejected(askAs(nc, who, names.webhooksAdmin)), `${who} may not ask webhooks`);
    }
    for (const [nc, who] of [
      [gateway, 'gateway'],
      [audit, 'audit'],
      [webhooks, 'webhooks'],
    ] as const)
      t.ok(await rejected(askAs(nc, who, names.requestsAdmin)), `${who} may not ask requests' admin RPC`);

    // Nobody but identity may answer identity's requests or webhooks' admin ones, nor read
    // another service's inbox.
    const errors: string[] = [];
    for (const [nc, subject] of [
      [requests, names.rpc.resolveApiKey],
      [gateway, '_INBOX_requests.>'],
      [requests, names.webhooksAdmin],
      [webhooks, names.requestsAdmin],
      [audit, names.deadLetters('webhooks')],
      [webhooks, names.credentialNotices],
    ] as const) {
      const sub = nc.subscribe(subject, {
        callback: (err) => {
          if (err) errors.push(`${subject}: ${err.message}`);
        },
      });
      await nc.flush();
      await eventually(() => errors.some((e) => e.startsWith(`${subject}:`)), {
        what: `the refusal of ${subject}`,
      });
      sub.unsubscribe();
    }
    t.equal(errors.length, 6, 'every one of these subscriptions is refused by the server');
    t.match(errors.join('\n'), /Permissions Violation/i);
  });

  t.test(`${label}: a wrong password or no user is refused`, async (t) => {
    const { as, server } = await privateNats(t, conf());
    t.ok(await rejected(as('requests', 'wrong')), 'wrong password');
    t.ok(
      await rejected(
        connectNats({ url: `nats://127.0.0.1:${server.port}`, name: 'anonymous' }).then((nc) => nc.flush()),
      ),
      'anonymous',
    );
  });
}
