#!/usr/bin/env node
// Local infrastructure for Support Desk: Redis, NATS (JetStream) and a MongoDB-compatible store.
//
//   node scripts/infra.mjs up|down|status|env     (also: npm run infra -- <cmd>)
//   node scripts/infra.mjs up --cluster            the clustered profile (docs/local-infrastructure.md):
//     the store, a three-server NATS JetStream cluster (SD_NATS_CLUSTER_PORT, default 4231–4239)
//     and a Redis Cluster of three primaries with a replica each (SD_REDIS_CLUSTER_PORT, default
//     6391–6396, buses 6411–6416); `down` stops it too.
//   node scripts/infra.mjs build-ferretdb [out]    (build FerretDB from source, see buildFerretDB())
//
// If MONGO_URL, NATS_URL and REDIS_URL are all set, nothing is started and those URLs are used
// (e.g. `docker compose up -d mongo redis nats`, or a cluster).
// Otherwise real servers are started detached under <repo>/.data/ (git-ignored), bound to 127.0.0.1:
//   Redis     redis://127.0.0.1:6380     pid/log in .data/redis
//   NATS      nats://127.0.0.1:4223      (monitoring 8223, JetStream in .data/nats) pid/log in .data/nats
//   Mongo     mongodb://127.0.0.1:27027  mongod if installed, else FerretDB v1 (pid/log in .data/ferretdb)
//             on the backend SD_STORE names:
//     postgresql (default)  PostgreSQL (Debian's, installed with apt-get when missing and root) on
//             127.0.0.1:5433, cluster in .data/postgres (log postgres.log, pid data/postmaster.pid),
//             owned by the `postgres` system user when run as root (PostgreSQL refuses root), else by
//             the current user (out of that user's reach, e.g. under /root: in the user's home,
//             linked from .data/postgres); trust authentication on loopback and its socket only;
//             FerretDB stores into its database `ferretdb` (role `ferretdb`). `down` stops FerretDB,
//             then PostgreSQL (pg_ctl stop -m fast). See libs/platform/launch/postgres.mjs for its
//             settings and scripts/infra/postgres-indexes.mjs for the GIN indexes it adds.
//     sqlite    FerretDB's SQLite backend, files in .data/ferretdb.
// Servers that already answer on their port are reused (a FerretDB of ours on the other backend
// too, with a warning: `down`, then `up`, to switch). `down` only stops servers this script started
// (it finds them through their pidfiles); anything else on those ports is left alone.
// `up` and `env` print the URLs, plus SD_POSTGRES_URL: FerretDB's PostgreSQL database when the
// store is FerretDB on PostgreSQL (else empty), where the tests' private stores make their own.
//
// Overrides (mainly for running a second, isolated set): SD_DATA_DIR, SD_REDIS_PORT, SD_NATS_PORT,
// SD_NATS_MONITOR_PORT, SD_MONGO_PORT, SD_POSTGRES_PORT, SD_STORE (postgresql | sqlite),
// SD_FERRETDB_DEBUG_PORT (FerretDB's debug listener, off by default), SD_INFRA_TIMEOUT (seconds,
// default 60).
// FerretDB binary: $FERRETDB_BIN, `ferretdb` on PATH, $(go env GOPATH)/bin/ferretdb, the machine cache
// (~/.cache/support-desk/ferretdb/<version>), else it is built from source into that cache.
// nats-server: $NATS_SERVER_BIN, else the pinned release in the machine cache, built on first use.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InfraError, log } from './infra/common.mjs';
import { buildFerretDB } from './infra/ferretdb.mjs';
import { down, envLines, status, up } from './infra/servers.mjs';

export { InfraError, infraUrls, isExternal, ROOT } from './infra/common.mjs';
export { findBinary, tcpCheck } from './infra/probes.mjs';
export { aptInstall } from './infra/packages.mjs';
export { buildFerretDB, findFerretDB } from './infra/ferretdb.mjs';
export { down, envLines, status, up } from './infra/servers.mjs';
export { buildTypeScript, ensureNodeModules } from './infra/workspace.mjs';

// ---------------------------------------------------------------------------------------------
// CLI

async function main(argv) {
  const cmd = argv[0] || 'status';
  switch (cmd) {
    case 'up': {
      const urls = await up({ cluster: argv.includes('--cluster') });
      for (const line of envLines(urls)) log(line);
      return 0;
    }
    case 'down':
      await down();
      return 0;
    case 'status': {
      const { servers, external } = await status();
      if (external) log('using MONGO_URL/NATS_URL/REDIS_URL from the environment');
      for (const s of servers) {
        const extra = s.pid ? ` (pid ${s.pid})` : s.up && !external ? ' (not started by this script)' : '';
        console.log(`${s.name.padEnd(8)} ${s.url.padEnd(40)} ${s.up ? 'up' : 'down'}${extra}`);
      }
      return servers.every((s) => s.up) ? 0 : 3;
    }
    case 'env':
      for (const line of envLines()) console.log(line);
      return 0;
    case 'build-ferretdb':
      buildFerretDB(argv[1] ? path.resolve(argv[1]) : undefined);
      return 0;
    default:
      console.error('usage: node scripts/infra.mjs up [--cluster]|down|status|env|build-ferretdb [out-file]');
      return 2;
  }
}

const invokedDirectly = (() => {
  try {
    return import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1] || '')).href;
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`[infra] ERROR: ${err instanceof InfraError ? err.message : err.stack || err}`);
      process.exit(1);
    },
  );
}
