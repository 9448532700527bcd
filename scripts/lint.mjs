#!/usr/bin/env node
// `npm run lint` (and `npm run format` with --fix), under the project's Node (scripts/node.mjs
// puts it first on PATH, so each tool's `#!/usr/bin/env node` finds it): eslint (the layers,
// eslint.config.js), dependency-cruiser (no import circles, .dependency-cruiser.cjs), knip (no
// unused file, export, type or dependency, and no unlisted one: knip.json names every entry) and
// prettier.
// Stops at the first tool that fails, with its exit code.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fix = process.argv.includes('--fix');
const steps = fix
  ? [
      ['prettier', ['--write', '--log-level', 'warn', '.']],
      ['eslint', ['--fix', '.']],
    ]
  : [
      ['eslint', ['.']],
      ['depcruise', ['--config', '.dependency-cruiser.cjs', 'libs', 'services', 'tools', 'test', 'scripts']],
      ['knip', ['--no-progress', '--no-config-hints']],
      ['prettier', ['--check', '.']],
    ];
for (const [tool, args] of steps) {
  const r = spawnSync(path.join(ROOT, 'node_modules', '.bin', tool), args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`${tool} failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
    process.exit(r.status || 1);
  }
}
