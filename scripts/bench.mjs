#!/usr/bin/env node
// `npm run bench`: sets up like `npm test` (dependencies, build, local infrastructure), then runs
// the `bench` script of every workspace that has one, one after the other so they do not compete
// for the two cores. Extra arguments name workspaces: `npm run bench -- gateway audit e2e`;
// `--script=NAME` runs another of their scripts instead (`npm run bench:startup` is
// `--script=bench:startup e2e`).
// Each bench writes its figures as JSON to the file named by BENCH_RESULTS_FILE; at the end one
// Markdown table of them all is printed and written to BENCH_TABLE_FILE (default
// .data/bench/<date>.md), headed by the machine, date, commit and the store in use.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTypeScript, ensureNodeModules, InfraError, ROOT, up } from './infra.mjs';
import { machine, readResults, renderTable } from './bench/report.mjs';
import { detectStore } from './bench/store.mjs';
import { ensureNatsServer } from './infra/nats-server.mjs';

function workspacesWith(script) {
  const found = [];
  for (const group of ['libs', 'services', 'test']) {
    const dir = path.join(ROOT, group);
    for (const name of fs.readdirSync(dir).sort()) {
      const pkgFile = path.join(dir, name, 'package.json');
      if (!fs.existsSync(pkgFile)) continue;
      const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
      if (pkg.scripts?.[script]) found.push({ name, pkgName: pkg.name, dir: path.join(dir, name) });
    }
  }
  return found;
}

async function main() {
  // Read before the build and the servers add their own load.
  const measuredOn = machine(ROOT);
  ensureNodeModules();
  if (!buildTypeScript()) process.exit(1);
  const urls = await up();
  const store = await detectStore(urls.MONGO_URL);
  console.log(`store: ${store.label} (${store.evidence})`);
  const args = process.argv.slice(2);
  const script = args.find((a) => a.startsWith('--script='))?.slice('--script='.length) || 'bench';
  const wanted = args.filter((a) => !a.startsWith('--script='));
  const targets = workspacesWith(script).filter((w) => wanted.length === 0 || wanted.includes(w.name));
  if (targets.length === 0) {
    console.error(
      `no workspace with a ${script} script${wanted.length ? ` among: ${wanted.join(', ')}` : ''}`,
    );
    process.exit(1);
  }
  const resultsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-bench-'));
  const results = {};
  let failed = 0;
  for (const w of targets) {
    console.log(`\n=== ${script}: ${w.pkgName} ===`);
    const resultsFile = path.join(resultsDir, `${w.name}.json`);
    const r = spawnSync('npm', ['run', script, '--silent'], {
      cwd: w.dir,
      stdio: 'inherit',
      env: {
        ...process.env,
        ...urls,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
        BENCH_RESULTS_FILE: resultsFile,
        // The pinned release, for a bench's private servers (BENCH_CLUSTER=1's JetStream cluster).
        NATS_SERVER_BIN: ensureNatsServer(),
      },
    });
    if (r.status !== 0) {
      failed++;
      console.error(`bench ${w.pkgName} failed (exit ${r.status})`);
    }
    results[w.name] = readResults(resultsFile);
  }
  fs.rmSync(resultsDir, { recursive: true, force: true });
  // Another script prints its own figures; the table is the bench scripts'.
  if (script !== 'bench') process.exit(failed ? 1 : 0);

  const table = renderTable({ machine: measuredOn, store, results });
  const tableFile =
    process.env.BENCH_TABLE_FILE ||
    path.join(ROOT, '.data', 'bench', `${measuredOn.date.replace(/[:.]/g, '-')}.md`);
  fs.mkdirSync(path.dirname(tableFile), { recursive: true });
  fs.writeFileSync(tableFile, table);
  const shown = tableFile.startsWith(`${ROOT}${path.sep}`) ? path.relative(ROOT, tableFile) : tableFile;
  console.log(`\n${table}\n(also in ${shown})`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err instanceof InfraError ? err.message : err);
  process.exit(1);
});
