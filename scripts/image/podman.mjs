// podman as the project runs it on these machines: Debian's podman 4.3 with runc (crun refuses a
// hybrid cgroup v1 layout), ulimits no higher than the host's (a container cannot raise them), and
// no registry (every image is made here: scripts/image/base.mjs, then the Dockerfile).
import { spawnSync } from 'node:child_process';
import { InfraError, log } from '../infra/common.mjs';
import { aptInstall, isRoot } from '../infra/packages.mjs';
import { findBinary } from '../infra/probes.mjs';

/** Debian packages the image build needs: the engine, its runtime, and the base image's maker. */
const PACKAGES = [
  ['podman', 'podman'],
  ['runc', 'runc'],
  ['debootstrap', 'debootstrap'],
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

/** Global options of every podman call: the runtime that works on cgroup v1 hosts. */
export const PODMAN_GLOBAL = ['--runtime', 'runc'];

/**
 * `--ulimit` options no higher than the host's own soft limits: podman's defaults (nofile 1048576)
 * exceed them on these machines and a container cannot raise a limit, so runc would refuse to start.
 */
export function ulimitArgs() {
  const limit = (flag) => {
    const r = spawnSync('sh', ['-c', `ulimit ${flag}`], { encoding: 'utf8' });
    const n = r.stdout.trim();
    return /^\d+$/.test(n) ? n : null;
  };
  const out = [];
  const nofile = limit('-n');
  const nproc = limit('-u');
  if (nofile) out.push('--ulimit', `nofile=${nofile}:${nofile}`);
  // The process limit also at most 4096: runc refused this machine's own (96365) with EPERM.
  const procs = nproc ? String(Math.min(Number(nproc), 4096)) : '4096';
  out.push('--ulimit', `nproc=${procs}:${procs}`);
  return out;
}

/** Runs podman; returns stdout. Throws with stderr on failure unless `allowFail`. */
export function podman(args, { allowFail = false, input, inherit = false } = {}) {
  const r = spawnSync('podman', [...PODMAN_GLOBAL, ...args], {
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
