// Debian packages the local servers need (installed with apt-get when running as root).
import { spawnSync } from 'node:child_process';
import { InfraError, log, warn } from './common.mjs';
import { findBinary } from './probes.mjs';

export function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) return { ok: false, message: r.error.message };
  return { ok: r.status === 0, message: `exit code ${r.status ?? r.signal}` };
}

let aptUpdated = false;
/** apt-get install (with apt-get update first). Returns true on success. Root only. */
export function aptInstall(packages) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    log('apt-get update');
    const u = run('apt-get', ['update'], { env });
    if (!u.ok) warn(`apt-get update failed (${u.message}); trying the install anyway`);
    aptUpdated = true;
  }
  log(`apt-get install -y ${packages.join(' ')}`);
  const r = run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env });
  if (!r.ok) warn(`apt-get install ${packages.join(' ')} failed (${r.message})`);
  return r.ok;
}

export function ensureDebianPackages() {
  // nats-server is built from the Go module proxy instead (scripts/infra/nats-server.mjs).
  const wanted = [['redis-server', 'redis-server']];
  const missing = wanted.filter(([bin]) => !findBinary(bin)).map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  if (!isRoot()) {
    throw new InfraError(
      [
        `missing: ${missing.join(', ')}.`,
        `Install them:   sudo apt-get install ${missing.join(' ')}`,
        'or run the infrastructure in Docker instead and point the scripts at it:',
        '  docker compose up -d mongo redis nats',
        "  export MONGO_URL='mongodb://127.0.0.1:27017/?replicaSet=rs0&directConnection=true'",
        '  export NATS_URL=nats://127.0.0.1:4222 REDIS_URL=redis://127.0.0.1:6379',
        '(publish those ports from docker-compose.yml, or use a docker-compose.override.yml)',
      ].join('\n'),
    );
  }
  log(`installing missing packages: ${missing.join(' ')}`);
  aptInstall(missing);
  const still = wanted.filter(([bin]) => !findBinary(bin)).map(([, pkg]) => pkg);
  if (still.length)
    throw new InfraError(`could not install ${still.join(', ')} with apt-get (see output above)`);
}
