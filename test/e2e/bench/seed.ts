/**
 * `npm run bench:seed -w @support-desk/e2e`: how long `sd-seed --demo` takes for BENCH_SEED_REQUESTS
 * (default 200) requests on a fresh stack (the processes `npm start` runs, on the shared
 * infrastructure), and where the CPU went meanwhile: the store's process, each service, and the
 * seeder with its deskctl. The store's figures (FerretDB's process, and on the PostgreSQL backend
 * the cluster behind it) are whole processes, so they include whatever else uses the shared store
 * at the time (other tests): read them with the machine's load.
 */
import fs from 'node:fs';
import os from 'node:os';
import { connectMongo } from '@support-desk/platform/service';
import { type Stack, startStack, type Teardownable } from '../src/stack.js';

const REQUESTS = Number(process.env.BENCH_SEED_REQUESTS ?? 200);

/**
 * CPU seconds (user + system) a process has used; with `children`, those of its children that
 * ended and were waited for instead (the seeder and its deskctl, for this process). Null when gone.
 */
function cpuSeconds(pid: number | 'self', children = false): number | null {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (children ? Number(f[13]) + Number(f[14]) : Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

/** The stack's service processes, found by the NATS namespace in their environment (Linux /proc). */
function servicePids(stack: Stack): Record<string, number> {
  const found: Record<string, number> = {};
  for (const entry of pids()) {
    try {
      const env = fs.readFileSync(`/proc/${entry}/environ`, 'utf8');
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const service = /services\/(\w+)\/dist\/src\/server\.js/.exec(cmd)?.[1];
      if (service && env.includes(`\0NATS_NAMESPACE=${stack.run}\0`)) found[service] = Number(entry);
    } catch {
      // a process that ended meanwhile, or one of another user
    }
  }
  return found;
}

/** The store's process id, when it runs on this machine (serverStatus names it). */
async function storePid(url: string): Promise<number | null> {
  if (!/^mongodb:\/\/(127\.0\.0\.1|localhost)[:/]/.test(url)) return null;
  const conn = await connectMongo({ url, dbName: 'admin' });
  try {
    const status = await conn.db?.admin().command({ serverStatus: 1 });
    return typeof status?.pid === 'number' ? status.pid : null;
  } catch {
    return null;
  } finally {
    await conn.close();
  }
}

/** The processes of /proc (ids), for the bounded scans below. */
const pids = () => fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));

/**
 * CPU seconds of the PostgreSQL cluster behind a FerretDB process on its PostgreSQL backend (its
 * postmaster, found by the port of `--postgresql-url`, with its live and ended backends): there
 * the store's work is mostly PostgreSQL's, not FerretDB's. A backend that ended during the seed
 * counts whole; null when FerretDB is on SQLite or the cluster is not on this machine.
 */
function postgresMeter(ferretdbPid: number): (() => number | null) | null {
  let port: string | undefined;
  try {
    const args = fs.readFileSync(`/proc/${ferretdbPid}/cmdline`, 'utf8').split('\0');
    port = /^--postgresql-url=postgres(?:ql)?:\/\/[^/]*:(\d+)\//.exec(
      args.find((a) => a.startsWith('--postgresql-url=')) ?? '',
    )?.[1];
  } catch {
    return null;
  }
  if (!port) return null;
  const postmaster = pids().find((pid) => {
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const dataDir = args[args.indexOf('-D') + 1];
      if (!/postgres$/.test(args[0]) || !args.includes('-D') || !dataDir) return false;
      return fs.readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[3]?.trim() === port;
    } catch {
      return false;
    }
  });
  if (!postmaster) return null;
  return () => {
    const own = cpuSeconds(Number(postmaster));
    if (own === null) return null;
    let total = own + (cpuSeconds(Number(postmaster), true) ?? 0);
    for (const pid of pids()) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        if (stat[1] === postmaster) total += cpuSeconds(Number(pid)) ?? 0;
      } catch {
        // a backend that ended meanwhile
      }
    }
    return total;
  };
}

const machineBusySeconds = () => {
  const [user, nice, system, , , irq, softirq, steal] = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
};

async function main() {
  const steps: (() => unknown)[] = [];
  const t: Teardownable = { teardown: (fn) => void steps.push(fn) };
  try {
    const stack = await startStack(t);
    const meters: Record<string, () => number | null> = {};
    for (const [service, pid] of Object.entries(servicePids(stack))) meters[service] = () => cpuSeconds(pid);
    const store = await storePid(stack.env.MONGO_URL);
    if (store) meters.store = () => cpuSeconds(store);
    const postgres = store ? postgresMeter(store) : null;
    if (postgres) meters.storePostgres = postgres;
    const before = Object.fromEntries(Object.entries(meters).map(([k, meter]) => [k, meter()]));
    const busyBefore = machineBusySeconds();
    // The seeder and its deskctl are children of this process: their CPU shows up here once they exit.
    const seederBefore = cpuSeconds('self', true) ?? 0;
    const started = Date.now();
    const r = await stack.seed([
      '--demo',
      '--requests',
      String(REQUESTS),
      '--run-id',
      'bench',
      '--url',
      stack.origin,
    ]);
    const seconds = (Date.now() - started) / 1000;
    if (r.code !== 0) throw new Error(`sd-seed exit ${r.code}: ${r.stderr.slice(-1500)}`);
    const cpu: Record<string, number | null> = {};
    for (const [k, meter] of Object.entries(meters)) {
      const now = meter();
      cpu[k] = now === null || before[k] === null ? null : +(now - before[k]!).toFixed(1);
    }
    cpu.seederAndDeskctl = +((cpuSeconds('self', true) ?? 0) - seederBefore).toFixed(1);
    const results = {
      bench: 'seed',
      requests: REQUESTS,
      seconds,
      seederSeconds: r.json?.seconds,
      apiCalls: r.json?.apiCalls,
      created: r.json?.created,
      cpuSeconds: cpu,
      machine: {
        busyCoreSeconds: +(machineBusySeconds() - busyBefore).toFixed(1),
        availableCoreSeconds: +(os.cpus().length * seconds).toFixed(1),
        loadAverage: os.loadavg()[0],
      },
    };
    console.log(
      `sd-seed --demo --requests ${REQUESTS}: ${seconds.toFixed(1)} s, ${results.apiCalls} API calls; ` +
        `CPU seconds meanwhile: ${JSON.stringify(cpu)}; machine busy ${results.machine.busyCoreSeconds} of ` +
        `${results.machine.availableCoreSeconds} core-seconds (load ${results.machine.loadAverage.toFixed(2)})`,
    );
    if (process.env.BENCH_RESULTS_FILE)
      fs.writeFileSync(process.env.BENCH_RESULTS_FILE, JSON.stringify(results));
  } finally {
    for (const step of steps.reverse()) await step();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
