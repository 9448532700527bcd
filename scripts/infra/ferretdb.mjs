// FerretDB v1: found on the machine, or built from source with the Go module proxy into the
// machine cache (scripts/infra/machine-cache.mjs), where every clone finds it.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InfraError, log, warn } from './common.mjs';
import { cacheEntry } from './machine-cache.mjs';
import { findBinary, goBinary, isExecutable } from './probes.mjs';

const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
const FERRETDB_VERSIONS = ['v1.24.2', 'v1.24.0'];

/** Where a pinned version is built: the machine cache, by version. */
const cachedBinary = (version) => path.join(cacheEntry('ferretdb', version), 'ferretdb');

/** Finds a FerretDB binary; returns null if there is none. */
export function findFerretDB() {
  const fromEnv = process.env.FERRETDB_BIN;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    warn(`FERRETDB_BIN=${fromEnv} is not an executable file; looking elsewhere`);
  }
  const onPath = findBinary('ferretdb');
  if (onPath) return onPath;
  const go = goBinary();
  if (go) {
    try {
      const gopath = execFileSync(go, ['env', 'GOPATH'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .trim()
        .split(path.delimiter)[0];
      if (gopath && isExecutable(path.join(gopath, 'bin', 'ferretdb')))
        return path.join(gopath, 'bin', 'ferretdb');
    } catch {
      // ignore
    }
  }
  return FERRETDB_VERSIONS.map(cachedBinary).find(isExecutable) ?? null;
}

/**
 * Builds FerretDB v1 from source into the machine cache (or `outFile`); returns the binary.
 * `go install ...@v1.24.1` does not work here (the proxy refuses that version and the version list),
 * so: `go mod download -json` a pinned version, copy the module to a writable temp dir, write
 * build/version/version.txt (the binary panics without it), then `go build ./cmd/ferretdb`.
 */
export function buildFerretDB(outFile) {
  const go = goBinary();
  if (!go)
    throw new InfraError(
      'FerretDB is not installed and Go is not available to build it (install mongod or Go)',
    );
  const errors = [];
  for (const version of FERRETDB_VERSIONS) {
    const out = outFile ?? cachedBinary(version);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferretdb-build-'));
    try {
      log(`building FerretDB ${version} from source (this takes a minute or two)...`);
      log(`  go mod download -json ${FERRETDB_MODULE}@${version}`);
      const dl = spawnSync(go, ['mod', 'download', '-json', `${FERRETDB_MODULE}@${version}`], {
        cwd: tmp,
        encoding: 'utf8',
        env: { ...process.env, GOFLAGS: '', GO111MODULE: 'on' },
        maxBuffer: 16 * 1024 * 1024,
      });
      let info = {};
      try {
        info = JSON.parse(dl.stdout || '{}');
      } catch {
        // fall through
      }
      if (dl.status !== 0 || !info.Dir) {
        throw new Error(`go mod download failed: ${info.Error || dl.stderr?.trim() || `exit ${dl.status}`}`);
      }
      const src = path.join(tmp, 'src');
      log(`  copying ${info.Dir} to ${src}`);
      execFileSync('cp', ['-r', info.Dir, src], { stdio: 'inherit' });
      execFileSync('chmod', ['-R', 'u+w', src], { stdio: 'inherit' });
      fs.mkdirSync(path.join(src, 'build', 'version'), { recursive: true });
      fs.writeFileSync(path.join(src, 'build', 'version', 'version.txt'), `${version}\n`);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      const tmpOut = `${out}.partial-${process.pid}`;
      log(`  GOTOOLCHAIN=local go build -trimpath -o ${out} ./cmd/ferretdb`);
      const started = Date.now();
      const b = spawnSync(go, ['build', '-trimpath', '-o', tmpOut, './cmd/ferretdb'], {
        cwd: src,
        stdio: 'inherit',
        env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod', GO111MODULE: 'on' },
      });
      if (b.error || b.status !== 0) {
        fs.rmSync(tmpOut, { force: true });
        throw new Error(`go build failed: ${b.error?.message || `exit ${b.status}`}`);
      }
      fs.renameSync(tmpOut, out);
      log(`  built ${out} in ${Math.round((Date.now() - started) / 1000)} s`);
      return out;
    } catch (err) {
      warn(`FerretDB ${version}: ${err.message}`);
      errors.push(`${version}: ${err.message}`);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  throw new InfraError(
    `could not build FerretDB (${errors.join('; ')}).\n` +
      'Install mongod, set FERRETDB_BIN to a FerretDB v1 binary, or set MONGO_URL/NATS_URL/REDIS_URL ' +
      '(e.g. `docker compose up -d mongo redis nats`).',
  );
}
