/**
 * The bench's measuring pieces: child processes, their CPU time, Redis' CPU time, one
 * autocannon run with its figures, and the median of several runs.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';

export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
// BENCH_RATE=<req/s>: a fixed offered load instead of "as fast as possible", so the CPU µs per
// request of two builds can be compared at the same load on a noisy machine.
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;

/** One run's figures: CPU µs per call by process (`autocannon` and `redis` included). */
export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  cpuUs: Record<string, number>;
}

export function child(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
  const c = fork(script, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    c.once('message', () => resolve(c));
    c.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

export async function waitReady(url: string, path = '/readyz') {
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${url}${path}`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never became ready`);
}

/** CPU time (user + system, ms) a process has used so far; null where /proc is missing. */
function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, 100 Hz ticks
  } catch {
    return null;
  }
}

/** Redis is a process on the same cores: its CPU per call is part of what rate limiting costs. */
export function redisCpuReader(url: string) {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  return {
    async ms(): Promise<number | null> {
      try {
        const info = await redis.info('cpu');
        const sum = ['used_cpu_sys', 'used_cpu_user']
          .map((k) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1] ?? Number.NaN))
          .reduce((a, b) => a + b, 0);
        return Number.isFinite(sum) ? sum * 1000 : null;
      } catch {
        return null;
      }
    },
    close: () => redis.disconnect(),
  };
}

export interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** The processes whose CPU per call is reported. */
  procs: Record<string, ChildProcess>;
  /** Headers made for each request when they change per call (a principal assertion). */
  perCall?: () => Record<string, string>;
}

/**
 * One autocannon run (after an uncounted warm-up of `warmUpS` seconds, when asked: a process'
 * first seconds are slower while the JIT settles); prints and returns req/s, latency and the CPU
 * each process spent per request (µs), which is what decides the ratios on a box with fewer
 * cores than busy processes.
 */
export async function measure(
  { name, url, headers = {}, procs, perCall }: Target,
  redisCpu: ReturnType<typeof redisCpuReader>,
  warmUpS: number,
): Promise<Figures> {
  const requests = perCall
    ? [{ setupRequest: (r: autocannon.Request) => ({ ...r, headers: { ...headers, ...perCall() } }) }]
    : undefined;
  if (warmUpS > 0) await autocannon({ url, headers, connections: CONNECTIONS, duration: warmUpS, requests });
  const before = Object.fromEntries(Object.entries(procs).map(([k, c]) => [k, cpuMs(c.pid)]));
  const redisBefore = await redisCpu.ms();
  const self = process.cpuUsage();
  const r = await autocannon({
    url,
    headers,
    connections: CONNECTIONS,
    duration: DURATION_S,
    overallRate: RATE,
    requests,
  });
  const selfUs = process.cpuUsage(self);
  const redisAfter = await redisCpu.ms();
  const perReq = (ms: number) => Math.round((ms * 1000) / Math.max(1, r.requests.total));
  const cpuUs: Record<string, number> = {};
  for (const [k, c] of Object.entries(procs)) {
    const now = cpuMs(c.pid);
    const was = before[k];
    if (now !== null && was !== null) cpuUs[k] = perReq(now - was);
  }
  cpuUs.autocannon = perReq((selfUs.user + selfUs.system) / 1000);
  if (redisBefore !== null && redisAfter !== null) cpuUs.redis = perReq(redisAfter - redisBefore);
  const figures = {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx + r.errors,
    cpuUs,
  };
  const cpu = Object.entries(cpuUs).map(([k, us]) => `${k} ${us}`);
  console.log(
    `${name.padEnd(38)} ${String(figures.rps).padStart(7)} req/s   p50 ${String(figures.p50).padStart(3)} ms   p99 ${String(figures.p99).padStart(4)} ms   non-2xx ${figures.non2xx}   CPU µs/req: ${cpu.join(', ')}`,
  );
  return figures;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Each figure's median over the runs (field by field, so not one run's row). */
export function medianFigures(runs: Figures[]): Figures {
  const cpuUs: Record<string, number> = {};
  for (const k of Object.keys(runs[0].cpuUs)) cpuUs[k] = median(runs.map((r) => r.cpuUs[k] ?? Number.NaN));
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    cpuUs,
  };
}
