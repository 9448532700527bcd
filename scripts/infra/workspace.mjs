// Workspace set-up shared by start.mjs and test.mjs: node_modules and the TypeScript build.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { InfraError, ROOT } from './common.mjs';
import { isExecutable } from './probes.mjs';

/** Runs `npm ci` (or `npm install` without a lockfile) when node_modules is missing. */
export function ensureNodeModules() {
  if (fs.existsSync(path.join(ROOT, 'node_modules'))) return;
  const hasLock = fs.existsSync(path.join(ROOT, 'package-lock.json'));
  const npm = (args) => {
    console.log(`> npm ${args.join(' ')}   (node_modules is missing)`);
    const r = spawnSync('npm', [...args, '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
    return !r.error && r.status === 0;
  };
  if (hasLock && npm(['ci'])) return;
  if (hasLock) {
    console.log(
      'WARNING: `npm ci` failed (is package-lock.json out of sync with package.json?); trying `npm install`.\n' +
        '         Regenerate the lockfile with `npm install` and commit it.',
    );
  }
  if (!npm(['install'])) throw new InfraError('installing dependencies with npm failed (see above)');
}

/** `tsc -b` at the repo root. Returns true on success (output goes to the terminal). */
export function buildTypeScript() {
  const local = path.join(ROOT, 'node_modules', '.bin', 'tsc');
  const [cmd, args] = isExecutable(local) ? [local, ['-b']] : ['npx', ['tsc', '-b']];
  console.log('> tsc -b');
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  const ok = !r.error && r.status === 0;
  console.log(ok ? `  build ok (${((Date.now() - started) / 1000).toFixed(1)} s)` : '  build FAILED');
  return ok;
}
