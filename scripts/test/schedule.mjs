// How long each test file took, and the order npm test runs them in: longest first, so the two
// slots of `tap --jobs` finish together instead of the heaviest file starting last. The times of
// every run are kept in the machine cache (scripts/infra/machine-cache.mjs), merged file by file,
// so a clean clone on a machine that ran the tests before schedules from its own last run; a
// machine that never did falls back to the table committed in test/README.md.
//
//   node scripts/test/schedule.mjs [raw.tap]   prints the per-file table (Markdown) of a run
//                                              (default .tap/last-run.tap), longest first
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from '../infra/machine-cache.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const timesFile = () => path.join(cacheRoot(), 'test-times.json');
const README_TABLE = path.join(ROOT, 'test', 'README.md');

/** Each top-level test file of a raw TAP run: `{ file, seconds, ok }`, in the order they ended. */
export function fileTimes(raw) {
  const out = [];
  for (const line of raw.split('\n')) {
    const m = /^(not ok|ok) \d+ - (\S+\.test\.js)\b.*# time=([\d.]+)(ms|s)\b/.exec(line);
    if (m) out.push({ file: m[2], seconds: Number(m[3]) / (m[4] === 'ms' ? 1000 : 1), ok: m[1] === 'ok' });
  }
  return out;
}

/** The seconds per file the table in test/README.md gives (rows `| path | seconds | ...`). */
function committedTimes() {
  const times = {};
  let text = '';
  try {
    text = fs.readFileSync(README_TABLE, 'utf8');
  } catch {
    return times;
  }
  for (const m of text.matchAll(/^\| `([^`]+\.test\.js)` \| ([\d.]+) \|/gm)) times[m[1]] = Number(m[2]);
  return times;
}

function knownTimes() {
  try {
    return { ...committedTimes(), ...JSON.parse(fs.readFileSync(timesFile(), 'utf8')) };
  } catch {
    return committedTimes();
  }
}

/** Records a run's times (relative paths) over those of earlier runs. */
export function recordTimes(raw) {
  const times = fileTimes(raw);
  if (times.length === 0) return;
  let known = {};
  try {
    known = JSON.parse(fs.readFileSync(timesFile(), 'utf8'));
  } catch {
    // first run on this machine
  }
  for (const { file, seconds } of times) known[file] = Math.round(seconds * 10) / 10;
  fs.mkdirSync(path.dirname(timesFile()), { recursive: true });
  const tmp = `${timesFile()}.${process.pid}`;
  fs.writeFileSync(tmp, `${JSON.stringify(known, null, 1)}\n`);
  fs.renameSync(tmp, timesFile());
}

/**
 * The files (paths relative to the root) longest first by their last known time; a file with no
 * known time (a new one) goes first, as if it were the longest, so it never starts last.
 */
export function longestFirst(files) {
  const known = knownTimes();
  const time = (f) => known[f] ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => time(b) - time(a) || a.localeCompare(b));
}

/** The Markdown table of a run, longest first: file, seconds, share of the summed time. */
export function timesTable(raw) {
  const times = fileTimes(raw).sort((a, b) => b.seconds - a.seconds);
  const total = times.reduce((s, t) => s + t.seconds, 0);
  const rows = times.map(
    ({ file, seconds, ok }) =>
      `| \`${file}\` | ${seconds.toFixed(1)} | ${((100 * seconds) / total).toFixed(1)} %${ok ? '' : ' (failed)'} |`,
  );
  return [
    '| file | seconds | share |',
    '|---|---:|---:|',
    ...rows,
    `| ${times.length} files | ${total.toFixed(0)} | 100 % |`,
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? path.join(ROOT, '.tap', 'last-run.tap');
  console.log(timesTable(fs.readFileSync(file, 'utf8')));
}
