/**
 * `npm run bench:idle`: what the whole stack burns with no traffic at all. Starts a stack with the
 * services' own defaults (identity, requests, audit, webhooks, the gateway; no test settings), lets
 * it settle, then reads the CPU ticks (`utime + stime` in /proc/<pid>/stat) of every process that
 * makes it over BENCH_IDLE_SECONDS (default 60): the services (this process's descendants) and the
 * local infrastructure `scripts/infra.mjs` started (Redis, NATS, FerretDB, PostgreSQL and every
 * backend of it, found through their pidfiles under .data). A process born during the window counts
 * from zero. Prints CPU-seconds per process group and the total as a share of one core.
 * Linux only (it reads /proc). The figures go into BENCHMARKS.md ("Idle").
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep, startPrivateStack, type Teardownable } from '../src/stack.js';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const SETTLE_MS = Number(process.env.BENCH_IDLE_SETTLE_MS ?? 10_000);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK)

interface ProcStat {
  pid: number;
  ppid: number;
  name: string;
  ticks: number;
}

/** Every process's parent, name and CPU ticks (fields 4, 2, 14 + 15 of /proc/<pid>/stat). */
function processes(): Map<number, ProcStat> {
  const all = new Map<number, ProcStat>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    // The name is in parentheses and may hold spaces: the fields after it are split from its end.
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    all.set(Number(entry), {
      pid: Number(entry),
      ppid: Number(fields[1]),
      name,
      ticks: Number(fields[11]) + Number(fields[12]),
    });
  }
  return all;
}

/** The infrastructure's pids from the pidfiles scripts/infra.mjs writes (first line of each). */
function infraRoots(): Map<number, string> {
  const files: Record<string, string> = {
    redis: '.data/redis/redis.pid',
    nats: '.data/nats/nats.pid',
    ferretdb: '.data/ferretdb/ferretdb.pid',
    mongod: '.data/mongo/mongod.pid',
    postgres: '.data/postgres/data/postmaster.pid',
  };
  const roots = new Map<number, string>();
  for (const [name, file] of Object.entries(files)) {
    try {
      const pid = Number(fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n')[0]);
      if (pid > 0 && fs.existsSync(`/proc/${pid}`)) roots.set(pid, name);
    } catch {
      // not started here (e.g. mongod when FerretDB runs)
    }
  }
  return roots;
}

/** Which group a process belongs to: the nearest root among its ancestors, if any. */
function groupOf(pid: number, all: Map<number, ProcStat>, roots: Map<number, string>): string | undefined {
  for (let p: number | undefined = pid, hops = 0; p && hops < 64; hops++) {
    const root = roots.get(p);
    if (root) return root;
    p = all.get(p)?.ppid;
  }
  return undefined;
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

const teardowns: (() => unknown)[] = [];
const t: Teardownable = { teardown: (fn) => void teardowns.push(fn) };
try {
  await startPrivateStack(t);
  await sleep(SETTLE_MS);
  // The services run under a watchdog shell each: a group per server process, named by its service.
  const roots = infraRoots();
  const before = processes();
  const mine = new Map([[process.pid, 'bench']]);
  for (const p of before.values()) {
    if (p.name === 'bash' || p.name === 'sh' || !groupOf(p.pid, before, mine)) continue;
    const service = /services\/([a-z]+)\/dist\/src\/server\.js/.exec(cmdline(p.pid))?.[1];
    if (service) roots.set(p.pid, service);
  }
  const started = Date.now();
  await sleep(SECONDS * 1000);
  const elapsed = (Date.now() - started) / 1000;
  const after = processes();
  const byGroup = new Map<string, number>();
  for (const p of after.values()) {
    const group = groupOf(p.pid, after, roots);
    if (!group) continue;
    const ticks = p.ticks - (before.get(p.pid)?.ticks ?? 0);
    byGroup.set(group, (byGroup.get(group) ?? 0) + Math.max(0, ticks));
  }
  const figures: Record<string, number> = {};
  let total = 0;
  for (const [group, ticks] of [...byGroup].sort((a, b) => b[1] - a[1])) {
    figures[`${group} (CPU-seconds over ${Math.round(elapsed)} s)`] = ticks / TICKS_PER_SECOND;
    total += ticks;
  }
  figures['whole stack (% of one core)'] = Math.round((total / TICKS_PER_SECOND / elapsed) * 1000) / 10;
  console.table(figures);
  if (process.env.BENCH_RESULTS_FILE)
    fs.writeFileSync(process.env.BENCH_RESULTS_FILE, JSON.stringify(figures));
} finally {
  for (const fn of teardowns.reverse()) await fn();
}
