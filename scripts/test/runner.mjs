// The test runner npm test (scripts/test.mjs) starts: every test file in its own Node process,
// `--jobs` at a time, in the order given (test.mjs gives them longest first). tap's own runner
// always sorts its files by name, which put the heaviest end-to-end files last; this is the same
// runner made with tap's public API (`t.spawn` subtests, buffered, `t.jobs` of them at once), so
// the output is the TAP tap's runner prints: a `# Subtest: <file>` per file and its `ok` line with
// `# time=`, then the summary.
//
//   node scripts/test/runner.mjs <list.json>     list.json: { files: [...], jobs, timeoutSeconds }
//
// A file whose first lines hold `// test-runner: alone` measures what a second file beside it
// would disturb (the overload test's latency criteria): it runs with no other file at once. Every
// file holds a lock on one file while it runs (util-linux's flock), shared, or exclusive for those:
// such a file waits for the file beside it to end, and the next one waits for it.
// A file whose first lines hold `// test-runner: timeout=<seconds>` may run that long when the run's
// limit is shorter (the cluster test, which installs and rolls a whole platform on a real cluster).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PRELOAD = path.join(ROOT, 'scripts', 'test', 'preload.mjs');
const { files, jobs, timeoutSeconds } = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

// The root waits for its files however long they take; each file has its own limit.
t.setTimeout(0);
t.jobs = Math.max(1, Math.min(jobs, files.length));
t.plan(files.length);
const ALONE = /^\/\/ test-runner: alone\b/m;
const head = (file) => fs.readFileSync(path.resolve(ROOT, file), 'utf8').slice(0, 4096);
const runsAlone = (file) => ALONE.test(head(file));
const TIMEOUT = /^\/\/ test-runner: timeout=(\d+)\b/m;
/** The file's own limit in seconds, or the run's when that is longer. */
const timeoutOf = (file) => Math.max(timeoutSeconds, Number(TIMEOUT.exec(head(file))?.[1] ?? 0));
const lockDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-test-runner-'));
const lockFile = path.join(lockDir, 'lock');
process.on('exit', () => fs.rmSync(lockDir, { recursive: true, force: true }));
const canLock = t.jobs > 1 && files.some(runsAlone) && spawnSync('flock', ['--version']).status === 0;
if (t.jobs > 1 && files.some(runsAlone) && !canLock)
  t.comment('flock is missing: the files marked "test-runner: alone" run beside others');
/** The command that runs one file: under the shared or exclusive lock when any file runs alone. */
const command = (file) => {
  const node = [
    process.execPath,
    '--enable-source-maps',
    '--disable-proto=throw',
    `--import=${PRELOAD}`,
    path.resolve(ROOT, file),
  ];
  return canLock
    ? ['flock', [runsAlone(file) ? '--exclusive' : '--shared', lockFile, ...node]]
    : [node[0], node.slice(1)];
};

// Plain Node per file: no loader (the files are compiled JavaScript; no test mocks modules) and no
// coverage tracking (tap's runner adds both to every file and to every process it starts), and
// source maps, so a failure's stack points at the TypeScript line.
for (const file of files) {
  const [cmd, args] = command(file);
  const seconds = timeoutOf(file);
  t.spawn(cmd, args, {
    buffered: t.jobs > 1,
    timeout: seconds * 1000,
    cwd: ROOT,
    // A file's own tap reads its limit from TAP_TIMEOUT (default 30 s).
    env: { ...process.env, TAP_TIMEOUT: String(seconds) },
    name: file,
    externalID: file,
    stack: '',
    at: null,
  });
}
