// nats-server: a current release, built from the Go module proxy into the machine cache
// (scripts/infra/machine-cache.mjs), so the local stack, the tests' private servers and the
// deployment files run one version. Debian's package is 2.9 (end of life; it cannot even parse
// deploy/nats.conf's `sync_interval`). NATS_SERVER_BIN names another binary instead.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { InfraError, log } from './common.mjs';
import { cacheEntry, ensureCacheEntry } from './machine-cache.mjs';
import { goBinary, isExecutable } from './probes.mjs';

/** The release everything runs; docker-compose.yml and the Helm example name the same one. */
export const NATS_SERVER_VERSION = 'v2.15.2';
const MODULE = 'github.com/nats-io/nats-server/v2';

/** The nats-server binary: $NATS_SERVER_BIN, else the pinned release (built on first use). */
export function ensureNatsServer() {
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new InfraError(`NATS_SERVER_BIN=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  const dir = cacheEntry('nats-server', NATS_SERVER_VERSION);
  const binary = path.join(dir, 'nats-server');
  if (isExecutable(binary)) return binary;
  const go = goBinary();
  if (!go)
    throw new InfraError(`nats-server ${NATS_SERVER_VERSION} is built with Go, which is not installed`);
  log(
    `building nats-server ${NATS_SERVER_VERSION} from the Go module proxy (about a minute, once per machine)`,
  );
  const started = Date.now();
  ensureCacheEntry(dir, (tmp) => {
    const r = spawnSync(go, ['install', '-trimpath', '-ldflags=-s -w', `${MODULE}@${NATS_SERVER_VERSION}`], {
      stdio: 'inherit',
      env: { ...process.env, GOBIN: tmp, GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false', CGO_ENABLED: '0' },
    });
    if (r.status !== 0) throw new InfraError(`building nats-server failed (exit ${r.status ?? r.signal})`);
  });
  log(`  built in ${((Date.now() - started) / 1000).toFixed(0)} s: ${binary}`);
  return binary;
}
