/**
 * What the stack's processes use, read from /proc (Linux only): CPU ticks (`utime + stime` of
 * /proc/<pid>/stat) and resident memory, per group — each service (a `services/<name>/dist/src/
 * server.js` process under this one) and each piece of local infrastructure `scripts/infra.mjs`
 * started (Redis, NATS, FerretDB, PostgreSQL and every backend of it, found through their
 * pidfiles under the repository's .data, or private ones this process started). The benches read
 * it: the idle bench, the stack bench's cost per call, the requests store bench's store CPU.
 */
import fs from 'node:fs';
import path from 'node:path';

export const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK)
const PAGE_BYTES = 4096;

interface ProcStat {
  pid: number;
  ppid: number;
  name: string;
  ticks: number;
  rssBytes: number;
}

/** Every process's parent, name, CPU ticks and resident pages (fields 4, 2, 14 + 15, 24). */
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
      rssBytes: Number(fields[21]) * PAGE_BYTES,
    });
  }
  return all;
}

/** The infrastructure's pids from the pidfiles scripts/infra.mjs writes under `root` (first line of each). */
function infraRoots(root: string): Map<number, string> {
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
      const pid = Number(fs.readFileSync(path.join(root, file), 'utf8').split('\n')[0]);
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

/** One reading: CPU ticks so far and resident bytes now, per group. */
export interface Reading {
  at: number;
  ticks: Map<string, number>;
  rssBytes: Map<string, number>;
}

/**
 * Finds the groups once (call it when the stack is up: the services run under a watchdog shell
 * each, a group per server process named by its service) and reads them on demand. `root` is the
 * repository whose infrastructure is measured (its .data holds the pidfiles).
 */
export function processMeter(root: string): { read(): Reading } {
  const roots = infraRoots(root);
  const all = processes();
  const mine = new Map([[process.pid, 'bench']]);
  for (const p of all.values()) {
    if (p.name === 'bash' || p.name === 'sh' || !groupOf(p.pid, all, mine)) continue;
    const service = /services\/([a-z]+)\/dist\/src\/server\.js/.exec(cmdline(p.pid))?.[1];
    if (service) roots.set(p.pid, service);
    // Private engines a bench starts itself (BENCH_CLUSTER=1: three NATS servers, six Redis).
    else if (p.name === 'nats-server') roots.set(p.pid, 'nats');
    else if (p.name === 'redis-server') roots.set(p.pid, 'redis');
  }
  // Each process's group and last ticks, kept when it exits: a reading sums every process ever
  // seen, so one gone between two readings still counts up to its last reading, and one born
  // between them counts from zero.
  const known = new Map<number, { group: string; ticks: number }>();
  return {
    read() {
      const now = processes();
      const rssBytes = new Map<string, number>();
      for (const p of now.values()) {
        const group = known.get(p.pid)?.group ?? groupOf(p.pid, now, roots);
        if (!group) continue;
        known.set(p.pid, { group, ticks: p.ticks });
        rssBytes.set(group, (rssBytes.get(group) ?? 0) + p.rssBytes);
      }
      const ticks = new Map<string, number>();
      for (const { group, ticks: t } of known.values()) ticks.set(group, (ticks.get(group) ?? 0) + t);
      return { at: Date.now(), ticks, rssBytes };
    },
  };
}

/** CPU-seconds per group between two readings, largest first. */
export function cpuSecondsBetween(before: Reading, after: Reading): [string, number][] {
  return [...after.ticks]
    .map(([group, t]): [string, number] => [
      group,
      Math.max(0, t - (before.ticks.get(group) ?? 0)) / TICKS_PER_SECOND,
    ])
    .sort((a, b) => b[1] - a[1]);
}
