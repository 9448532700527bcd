// Which store the bench ran against, asked of the store itself: every local figure is the store's
// as much as the code's, so the table must say whether it was mongod, FerretDB over SQLite or
// FerretDB over PostgreSQL. Two independent readings, so one changing does not mislead:
//   1. `explain` of a find: FerretDB passes on its backend's own query plan, SQLite's as lines
//      ("id=2 parent=0 notused=0 detail=SCAN ..."), PostgreSQL's as a JSON plan ("Node Type");
//   2. when the server runs on this machine, its process's `--handler` flag or FERRETDB_HANDLER
//      (serverStatus gives the pid).
import fs from 'node:fs';
import { MongoClient } from 'mongodb';

const TIMEOUT_MS = 5000;

/** The backend a FerretDB `explain` answer shows, or null when the plan says nothing recognisable. */
export function backendOfPlan(queryPlanner) {
  const plan = queryPlanner?.Plan ?? (Array.isArray(queryPlanner) ? queryPlanner[0]?.Plan : undefined);
  const text = JSON.stringify(plan ?? null);
  if (/"Node Type"/.test(text)) return 'postgresql';
  if (/detail=(SCAN|SEARCH)/.test(text)) return 'sqlite';
  return null;
}

/** The `--handler` of a local FerretDB process (flag or environment), or null. */
function backendOfProcess(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const flag = args.find((a) => a.startsWith('--handler='));
    if (flag) return flag.slice('--handler='.length);
    const i = args.indexOf('--handler');
    if (i >= 0 && args[i + 1]) return args[i + 1];
    const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const variable = env.find((e) => e.startsWith('FERRETDB_HANDLER='));
    return variable ? variable.slice('FERRETDB_HANDLER='.length) : null;
  } catch {
    return null;
  }
}

const isLoopback = (url) => /^mongodb:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(url);

/** Explains a find on a throw-away collection (a plan needs a real table), then drops it. */
async function explainBackend(client) {
  const db = client.db(`bench_store_probe_${process.pid}`);
  try {
    await db.collection('probe').insertOne({ status: 'open' });
    const explained = await db.command({ explain: { find: 'probe', filter: { status: 'open' } } });
    return backendOfPlan(explained.queryPlanner);
  } finally {
    await db.dropDatabase().catch(() => undefined);
  }
}

const LABELS = {
  sqlite: 'FerretDB SQLite',
  postgresql: 'FerretDB PostgreSQL',
};

/**
 * `{kind, label, version, evidence}`: kind `mongod`, `ferretdb-sqlite`, `ferretdb-postgresql`,
 * `ferretdb` (backend not recognised) or `unknown` (not reachable).
 */
export async function detectStore(mongoUrl) {
  const client = new MongoClient(mongoUrl, {
    serverSelectionTimeoutMS: TIMEOUT_MS,
    connectTimeoutMS: TIMEOUT_MS,
    socketTimeoutMS: 4 * TIMEOUT_MS,
  });
  try {
    await client.connect();
    const admin = client.db('admin');
    const info = await admin.command({ buildInfo: 1 });
    if (!info.ferretdbVersion) {
      return {
        kind: 'mongod',
        label: `mongod ${info.version}`,
        version: info.version,
        evidence: 'buildInfo',
      };
    }
    const fromPlan = await explainBackend(client).catch(() => null);
    const status = await admin.command({ serverStatus: 1 }).catch(() => ({}));
    const fromProcess = isLoopback(mongoUrl) ? backendOfProcess(status.pid) : null;
    const backend = fromPlan ?? fromProcess;
    const evidence = [
      `explain: ${fromPlan ?? 'not recognised'}`,
      fromProcess ? `process ${status.pid}: --handler=${fromProcess}` : null,
    ]
      .filter(Boolean)
      .join(', ');
    const disagree = fromPlan && fromProcess && fromPlan !== fromProcess;
    return {
      kind: backend ? `ferretdb-${backend}` : 'ferretdb',
      label: `${LABELS[backend] ?? `FerretDB (backend ${backend ?? 'unknown'})`} ${info.ferretdbVersion}${disagree ? ' (readings disagree!)' : ''}`,
      version: info.ferretdbVersion,
      evidence,
    };
  } catch (err) {
    return { kind: 'unknown', label: `unknown (${err.message})`, version: null, evidence: 'unreachable' };
  } finally {
    await client.close().catch(() => undefined);
  }
}
