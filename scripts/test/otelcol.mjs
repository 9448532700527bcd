// The OpenTelemetry Collector the tracing tests export to: a minimal build (OTLP receiver, file
// exporter) from test/tools/otelcol, compiled with the Go module proxy into the machine cache.
// A stamp (a hash of the module's go.mod, go.sum and main.go) rebuilds it when the pins change.
// `node scripts/test/otelcol.mjs` builds it with Node alone (CI starts it before `npm ci`).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InfraError, log, ROOT } from '../infra/common.mjs';
import { cacheRoot } from '../infra/machine-cache.mjs';

const SOURCE = path.join(ROOT, 'test', 'tools', 'otelcol');

export const collectorBinary = () => path.join(cacheRoot(), 'otelcol', 'otelcol');

function sourceHash() {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(fs.readFileSync(path.join(SOURCE, file)));
  return hash.digest('hex');
}

/** Builds the collector unless the one in the machine cache was built from this source. */
export function ensureCollector() {
  const binary = collectorBinary();
  const stamp = `${binary}.stamp`;
  const want = sourceHash();
  if (fs.existsSync(binary) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) return binary;
  fs.mkdirSync(path.dirname(binary), { recursive: true });
  log('building the OpenTelemetry Collector (test/tools/otelcol; about a minute on a fresh machine)');
  const started = Date.now();
  const r = spawnSync('go', ['build', '-mod=readonly', '-trimpath', '-ldflags=-s -w', '-o', binary, '.'], {
    cwd: SOURCE,
    stdio: 'inherit',
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false', CGO_ENABLED: '0' },
  });
  if (r.status !== 0) throw new InfraError(`building the collector failed (exit ${r.status ?? r.signal})`);
  fs.writeFileSync(stamp, want);
  log(`  built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return binary;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  try {
    console.log(ensureCollector());
  } catch (err) {
    console.error(`[infra] ${err.message}`);
    process.exit(1);
  }
}
