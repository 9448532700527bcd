// The test runner npm test (scripts/test.mjs) starts: every test file in its own Node process,
// `--jobs` at a time, in the order given (test.mjs gives them longest first). tap's own runner
// always sorts its files by name, which put the heaviest end-to-end files last; this is the same
// runner made with tap's public API (`t.spawn` subtests, buffered, `t.jobs` of them at once), so
// the output is the TAP tap's runner prints: a `# Subtest: <file>` per file and its `ok` line with
// `# time=`, then the summary.
//
//   node scripts/test-runner.mjs <list.json>     list.json: { files: [...], jobs, timeoutSeconds }
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { files, jobs, timeoutSeconds } = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

// The root waits for its files however long they take; each file has its own limit.
t.setTimeout(0);
t.jobs = Math.max(1, Math.min(jobs, files.length));
t.plan(files.length);
// Plain Node per file: no loader (the files are compiled JavaScript; no test mocks modules) and no
// coverage tracking (tap's runner adds both to every file and to every process it starts), and
// source maps, so a failure's stack points at the TypeScript line.
for (const file of files) {
  t.spawn(process.execPath, ['--enable-source-maps', '--disable-proto=throw', path.resolve(ROOT, file)], {
    buffered: t.jobs > 1,
    timeout: timeoutSeconds * 1000,
    cwd: ROOT,
    // A file's own tap reads its limit from TAP_TIMEOUT (default 30 s).
    env: { ...process.env, TAP_TIMEOUT: String(timeoutSeconds) },
    name: file,
    externalID: file,
    stack: '',
    at: null,
  });
}
