import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import t from 'tap';
import { progressWriter, readProgress, type RunProgress, stateFile } from '../src/state.js';

const progress = (done: RunProgress['done']): RunProgress => ({
  runId: 'demo',
  status: 'running',
  requests: 3,
  attempts: 1,
  startedAt: new Date(0).toISOString(),
  done,
  summary: null,
});

t.test('one progress file per run id and deployment', async (t) => {
  const a = stateFile('/x', 'demo', ['http://127.0.0.1:8080', 'mongodb://127.0.0.1:27027', 'identity', 'sd']);
  const b = stateFile('/x', 'demo', ['http://127.0.0.1:8080', 'mongodb://127.0.0.1:27027', 'other_db', 'sd']);
  const c = stateFile('/x', 'other', [
    'http://127.0.0.1:8080',
    'mongodb://127.0.0.1:27027',
    'identity',
    'sd',
  ]);
  t.match(basename(a), /^demo\.[0-9a-f]{16}\.json$/);
  t.not(a, b, 'another database is another deployment: its own progress');
  t.not(a, c, 'another run id: its own progress');
  t.equal(
    a,
    stateFile('/x', 'demo', ['http://127.0.0.1:8080', 'mongodb://127.0.0.1:27027', 'identity', 'sd']),
  );
});

t.test('progress is saved in call order, atomically, and read back', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sd-seed-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = stateFile(join(dir, 'nested'), 'demo', ['x']);
  t.equal(await readProgress(file), null, 'no file yet: a fresh run');
  const save = progressWriter(file);
  // Saves issued without waiting (concurrent workers) land in the order they were made.
  const saves = [0, 1, 2].map((i) =>
    save(progress(Object.fromEntries([[i, { requestId: `req_${i}`, step: 1 }]]))),
  );
  await Promise.all(saves);
  t.same((await readProgress(file))?.done, { 2: { requestId: 'req_2', step: 1 } }, 'the last save wins');
  t.same(await readdir(join(dir, 'nested')), [basename(file)], 'no temporary file left behind');
});
