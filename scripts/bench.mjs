#!/usr/bin/env node
// `npm run bench`: sets up like `npm test` (dependencies, build, local infrastructure), then runs
// the `bench` script of every workspace that has one, one after the other so they do not compete
// for the two cores. Extra arguments name workspaces: `npm run bench -- gateway audit`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildTypeScript, ensureNodeModules, InfraError, ROOT, up } from './infra.mjs';

function workspacesWithBench() {
  const found = [];
  for (const group of ['libs', 'services']) {
    const dir = path.join(ROOT, group);
    for (const name of fs.readdirSync(dir).sort()) {
      const pkgFile = path.join(dir, name, 'package.json');
      if (!fs.existsSync(pkgFile)) continue;
      const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
      if (pkg.scripts?.bench) found.push({ name, pkgName: pkg.name, dir: path.join(dir, name) });
    }
  }
  return found;
}

async function main() {
  ensureNodeModules();
  if (!buildTypeScript()) process.exit(1);
  const urls = await up();
  const wanted = process.argv.slice(2);
  const targets = workspacesWithBench().filter((w) => wanted.length === 0 || wanted.includes(w.name));
  if (targets.length === 0) {
    console.error(`no workspace with a bench script${wanted.length ? ` among: ${wanted.join(', ')}` : ''}`);
    process.exit(1);
  }
  let failed = 0;
  for (const w of targets) {
    console.log(`\n=== bench: ${w.pkgName} ===`);
    const r = spawnSync('npm', ['run', 'bench', '--silent'], {
      cwd: w.dir,
      stdio: 'inherit',
      env: { ...process.env, ...urls, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    });
    if (r.status !== 0) {
      failed++;
      console.error(`bench ${w.pkgName} failed (exit ${r.status})`);
    }
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err instanceof InfraError ? err.message : err);
  process.exit(1);
});
