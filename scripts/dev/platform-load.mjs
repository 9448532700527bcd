#!/usr/bin/env node
// What loading each entry of @support-desk/platform costs (BENCHMARKS.md, issue 33):
//
//   node scripts/dev/platform-load.mjs [--runs=9] [checkout …]
//
// For each entry of the package's `exports` (its root barrel too, where a checkout still has one;
// not ./telemetry, ./launch and ./testing, which are no service's start-up), a fresh Node process
// imports it and reports the CPU time (user + system, process.cpuUsage) of that import alone and
// how many modules it resolved. Runs are interleaved (entry by entry, checkout by checkout) so
// all see the same machine load; the table gives medians. Each checkout must be built (`tsc -b`);
// the default is this one. Give two to compare (e.g. main's worktree and a branch).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SKIPPED = new Set(['./telemetry', './launch', './testing']);
const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 9);
const checkouts = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (checkouts.length === 0) checkouts.push(ROOT);

const PROBE = `
  import { registerHooks } from 'node:module';
  let resolved = 0;
  registerHooks({ resolve(s, c, next) { resolved += 1; return next(s, c); } });
  const before = process.cpuUsage();
  await import(process.env.PLATFORM_ENTRY);
  const cpu = process.cpuUsage(before);
  console.log(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, resolved }));
`;

function entriesOf(checkout) {
  const pkg = JSON.parse(fs.readFileSync(path.join(checkout, 'libs', 'platform', 'package.json'), 'utf8'));
  return Object.keys(pkg.exports ?? {})
    .filter((k) => !SKIPPED.has(k))
    .map((k) => (k === '.' ? '@support-desk/platform' : `@support-desk/platform/${k.slice(2)}`));
}

function once(checkout, entry) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE], {
    cwd: checkout,
    env: { ...process.env, PLATFORM_ENTRY: entry },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`${checkout}: importing ${entry} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const samples = new Map(); // `${checkout}\t${entry}` → [{cpuMs, resolved}]
const plan = checkouts.flatMap((checkout) => entriesOf(checkout).map((entry) => [checkout, entry]));
for (let i = 0; i < runs; i++)
  for (const [checkout, entry] of plan) {
    const key = `${checkout}\t${entry}`;
    if (!samples.has(key)) samples.set(key, []);
    samples.get(key).push(once(checkout, entry));
  }

console.log(`| checkout | entry | CPU ms (median of ${runs}) | modules resolved |`);
console.log('|---|---|---:|---:|');
for (const [key, xs] of samples) {
  const [checkout, entry] = key.split('\t');
  const cpu = median(xs.map((x) => x.cpuMs)).toFixed(0);
  console.log(
    `| ${path.basename(checkout)} | \`${entry}\` | ${cpu} | ${median(xs.map((x) => x.resolved))} |`,
  );
}
