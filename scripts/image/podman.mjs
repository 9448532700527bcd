// podman as the project runs it on these machines: Debian's podman 4.3 with runc (crun refuses a
// hybrid cgroup v1 layout), ulimits no higher than the host's (a container cannot raise them), and
// no registry (every image is made here: scripts/image/base.mjs, then the Dockerfile).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { InfraError, log } from '../infra/common.mjs';
import { cacheRoot } from '../infra/machine-cache.mjs';
import { aptInstall, isRoot } from '../infra/packages.mjs';
import { findBinary } from '../infra/probes.mjs';

/** Debian packages the image build needs: the engine, its runtime, and the base image's maker. */
const PACKAGES = [
  ['podman', 'podman'],
  ['runc', 'runc'],
  ['debootstrap', 'debootstrap'],
  // A pod's infra container (`npm run containers`): podman builds its pause image from it.
  ['catatonit', 'catatonit'],
];

/** Installs podman, runc and debootstrap with apt-get when one is missing (root only). */
export function ensureImageTools() {
  const missing = () => PACKAGES.filter(([bin]) => !findBinary(bin)).map(([, pkg]) => pkg);
  if (missing().length === 0) return;
  if (!isRoot())
    throw new InfraError(
      `missing: ${missing().join(', ')}. Install them:   sudo apt-get install ${missing().join(' ')}`,
    );
  aptInstall(missing());
  if (missing().length) throw new InfraError(`could not install ${missing().join(', ')} with apt-get`);
}

/**
 * Ulimits no higher than the host's own soft limits: podman's defaults (nofile 1048576) exceed
 * them on these machines and a container cannot raise a limit, so runc would refuse to start.
 * The process limit is at most 4096: runc refused this machine's own (96365) with EPERM.
 */
export function ulimits() {
  const limit = (flag) => {
    const n = spawnSync('sh', ['-c', `ulimit ${flag}`], { encoding: 'utf8' }).stdout.trim();
    return /^\d+$/.test(n) ? Number(n) : null;
  };
  const nofile = limit('-n') ?? 1024;
  const nproc = Math.min(limit('-u') ?? 4096, 4096);
  return { nofile, nproc };
}

/**
 * podman's configuration for the project's calls (CONTAINERS_CONF, so the machine's own files are
 * left alone): runc, and default ulimits the host allows, which also reach containers podman makes
 * itself (a pod's infra container) where no --ulimit can be passed.
 */
function containersConf() {
  const { nofile, nproc } = ulimits();
  const file = path.join(cacheRoot(), 'podman', `containers-${nofile}-${nproc}.conf`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const body = [
      '[containers]',
      `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]`,
      '[engine]',
      'runtime = "runc"',
      '',
    ].join('\n');
    fs.writeFileSync(`${file}.${process.pid}`, body);
    fs.renameSync(`${file}.${process.pid}`, file);
  }
  return file;
}

/** The environment every podman call runs with (its configuration, plus `extra`). */
export const podmanEnv = (extra = {}) => ({ ...process.env, CONTAINERS_CONF: containersConf(), ...extra });

/** Runs podman; returns stdout. Throws with stderr on failure unless `allowFail`. */
export function podman(args, { allowFail = false, input, inherit = false, env = {} } = {}) {
  const r = spawnSync('podman', args, {
    env: podmanEnv(env),
    encoding: 'utf8',
    input,
    maxBuffer: 64 * 1024 * 1024,
    // Progress goes to stderr, so a caller's stdout stays its own (`npm run image -- --print`).
    stdio: [input === undefined ? 'ignore' : 'pipe', inherit ? 2 : 'pipe', inherit ? 2 : 'pipe'],
  });
  if (!allowFail && (r.error || r.status !== 0)) {
    const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
    throw new InfraError(`podman ${args.join(' ')} failed (${why})\n${r.stderr ?? ''}`.trim());
  }
  return { ok: !r.error && r.status === 0, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

export const imageExists = (ref) => podman(['image', 'exists', ref], { allowFail: true }).ok;

/** Whether podman can run a container on this machine at all (tests skip only when not). */
export function podmanWorks() {
  if (!findBinary('podman') || !findBinary('runc'))
    return { ok: false, why: 'podman or runc is not installed' };
  const r = podman(['info', '--format', '{{.Host.OCIRuntime.Name}}'], { allowFail: true });
  if (!r.ok) return { ok: false, why: `podman info failed: ${r.stderr.trim()}` };
  return { ok: true, why: '' };
}

export { log };
