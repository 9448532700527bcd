// The streams come from the operator's step (provision-streams), never from a service: it makes
// them with their limits and is idempotent; a service that finds a stream missing says so and
// waits for it.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { natsNames } from '@support-desk/contracts';
import t from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import { jetstream } from '@nats-io/jetstream';
import { awaitStreams, connectNats, jetstreamApi, provisionStreams } from '../src/subpaths/messaging.js';
import {
  startPrivateNatsCluster,
  type Teardownable,
  testEnv,
  testNats,
  uniqueName,
} from '../src/testing/index.js';

const CLI = resolve(fileURLToPath(import.meta.url), '../../src/cli/provision-streams.js');

/** A logger whose lines the test reads. */
function recordingLogger() {
  const lines: { msg: string; stream?: string }[] = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  return { logger, lines };
}

/** A NATS connection and a namespace with no streams yet (whatever this test makes is removed). */
async function unprovisioned(t: Teardownable) {
  const { nc } = await testNats(t);
  const names = natsNames(uniqueName('t'));
  const jsm = await jetstreamApi(nc);
  t.teardown(async () => {
    await jsm.streams.delete(names.eventsStream).catch(() => undefined);
    await jsm.streams.delete(names.noticesStream).catch(() => undefined);
  });
  return { nc, names, jsm };
}

t.test('a service waits for its streams, saying so, until they are provisioned', async (t) => {
  const { nc, names } = await unprovisioned(t);
  const { logger, lines } = recordingLogger();
  let ready = false;
  const waiting = awaitStreams(nc, names, ['events', 'notices'], logger, { retryMs: 50 }).then(() => {
    ready = true;
  });
  const deadline = Date.now() + 10_000;
  while (lines.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  t.notOk(ready, 'still waiting: no service makes a stream');
  t.match(lines[0], { stream: names.eventsStream, msg: /does not exist \(provision the streams/ });
  t.same(await provisionStreams(nc, names), { events: 'created', notices: 'created' });
  await waiting;
  t.ok(ready, 'ready once provisioned');
  t.same(await provisionStreams(nc, names), { events: 'unchanged', notices: 'unchanged' }, 'idempotent');
});

t.test('provision-streams: the operator step, with its limits, run again to change them', async (t) => {
  const { names, jsm } = await unprovisioned(t);
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [CLI], {
      env: {
        PATH: process.env.PATH ?? '',
        NATS_URL: testEnv.natsUrl,
        NATS_NAMESPACE: names.namespace,
        ...env,
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
  const first = run({ EVENTS_MAX_AGE_DAYS: '30' });
  t.equal(first.status, 0, first.stderr);
  t.match(first.stdout, /"streams":\{"events":"created","notices":"created"\}/);
  const events = await jsm.streams.info(names.eventsStream);
  t.equal(events.config.max_age, 30 * 86_400 * 1e9, 'the events kept 30 days');
  t.equal(events.config.subjects.join(), names.eventsWildcard);
  const second = run({ EVENTS_MAX_AGE_DAYS: '30', EVENTS_MAX_BYTES: '1048576' });
  t.match(second.stdout, /"events":"updated","notices":"unchanged"/);
  t.equal((await jsm.streams.info(names.eventsStream)).config.max_bytes, 1_048_576, 'a limit changed');
  const bad = run({ EVENTS_MAX_AGE_DAYS: '-1' });
  t.equal(bad.status, 1, 'a bad limit is refused');
  t.match(bad.stderr, /EVENTS_MAX_AGE_DAYS/);
});

t.test('on a three-server JetStream cluster: streams at three replicas survive their leader', async (t) => {
  const cluster = await startPrivateNatsCluster(t);
  // NATS_URL lists every server: a client starting while the first is down connects to another.
  await cluster.servers[0].crash();
  const nc = await connectNats({ url: cluster.url, name: 'provisioner' });
  t.teardown(() => nc.close());
  await nc.flush();
  t.not(nc.info?.port, cluster.servers[0].port, 'connected to a server that is up');
  await cluster.servers[0].start();
  await cluster.ready();

  const names = natsNames(uniqueName('t'));
  t.same(await provisionStreams(nc, names, { replicas: 3 }), { events: 'created', notices: 'created' });
  const jsm = await jetstreamApi(nc);
  for (const stream of [names.eventsStream, names.noticesStream]) {
    const info = await jsm.streams.info(stream);
    t.equal(info.config.num_replicas, 3, `${stream}: three replicas`);
  }

  const js = jetstream(nc);
  const subject = `${names.namespace}.events.request.created`;
  /** What the outbox relay does: the same msgID again until JetStream acknowledges it (bounded). */
  async function publish(id: string) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await js.publish(subject, new TextEncoder().encode(id), { msgID: id, timeout: 1000 });
      } catch (err) {
        if (attempt >= 60) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
  for (let i = 0; i < 20; i++) await publish(`m${i}`);
  const leader = await cluster.streamLeader(names.eventsStream);
  const victim = cluster.servers.find((s) => s.name === leader);
  t.ok(victim, `the events stream's leader: ${leader}`);
  await victim!.crash();
  for (let i = 20; i < 40; i++) await publish(`m${i}`);
  t.ok((await publish('m5')).duplicate, 'a publish repeated within the window is recognised as one');
  let newLeader: string | null = null;
  for (let i = 0; i < 120 && (!newLeader || newLeader === leader); i++) {
    newLeader = await cluster.streamLeader(names.eventsStream);
    await new Promise((r) => setTimeout(r, 250));
  }
  t.not(newLeader, leader, `another server leads: ${newLeader}`);
  await victim!.start();
  const state = (await jsm.streams.info(names.eventsStream)).state;
  t.equal(state.messages, 40, 'every acknowledged publish stored once, none twice');
});
