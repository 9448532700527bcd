// The infrastructure image of `npm run containers`: Redis and PostgreSQL from Debian's packages,
// nats-server and FerretDB as the project builds them for the local stack (scripts/infra/), on
// the build base (scripts/image/base.mjs). One image runs as the three servers (the command picks).
// Tagged by what it holds and kept as a docker-archive in the machine cache, like the app image.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InfraError, log } from '../infra/common.mjs';
import { buildFerretDB, findFerretDB } from '../infra/ferretdb.mjs';
import { cacheEntry, ensureCacheEntry } from '../infra/machine-cache.mjs';
import { ensureNatsServer } from '../infra/nats-server.mjs';
import { imageExists, podman } from '../image/podman.mjs';

/** Debian's PostgreSQL line (bookworm), whose binaries live under /usr/lib/postgresql/<major>. */
export const POSTGRES_MAJOR = '15';

const CONTAINERFILE = `ARG BASE
FROM \${BASE}
RUN apt-get update \\
 && apt-get install -y --no-install-recommends redis-server postgresql-${POSTGRES_MAJOR} \\
 && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
COPY nats-server ferretdb /usr/local/bin/
ENV PATH=/usr/lib/postgresql/${POSTGRES_MAJOR}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
`;

function fileHash(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** The infrastructure image (built, or loaded from the machine cache); returns its tag. */
export function ensureInfraImage(bases) {
  const nats = ensureNatsServer();
  const ferretdb = findFerretDB() ?? buildFerretDB();
  const key = createHash('sha256')
    .update(`${bases.key}\0${CONTAINERFILE}\0${fileHash(nats)}\0${fileHash(ferretdb)}`)
    .digest('hex')
    .slice(0, 16);
  const tag = `localhost/support-desk/infra:${key}`;
  const entry = cacheEntry('image-infra', key);
  const archive = path.join(entry, 'image.tar');
  if (imageExists(tag)) return tag;
  if (fs.existsSync(archive)) {
    log(`podman load ${archive}`);
    podman(['load', '--input', archive]);
    return tag;
  }
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-infra-image-'));
  try {
    fs.writeFileSync(path.join(context, 'Containerfile'), CONTAINERFILE);
    fs.copyFileSync(nats, path.join(context, 'nats-server'));
    fs.copyFileSync(ferretdb, path.join(context, 'ferretdb'));
    fs.chmodSync(path.join(context, 'nats-server'), 0o755);
    fs.chmodSync(path.join(context, 'ferretdb'), 0o755);
    log(
      `podman build ${tag} (redis-server, postgresql-${POSTGRES_MAJOR} from Debian; nats-server, ferretdb)`,
    );
    const started = Date.now();
    podman(['build', '--pull=never', '--build-arg', `BASE=${bases.build}`, '--tag', tag, context], {
      inherit: true,
    });
    log(`  built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } catch (err) {
    throw new InfraError(`building the infrastructure image failed: ${err.message}`);
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
  ensureCacheEntry(entry, (tmp) => {
    podman(['save', '--format', 'docker-archive', '--output', path.join(tmp, 'image.tar'), tag]);
  });
  return tag;
}
