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
import { awaitStreams, jetstreamApi, provisionStreams } from '../src/index.js';
import { type Teardownable, testEnv, testNats, uniqueName } from '../src/testing/index.js';

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
