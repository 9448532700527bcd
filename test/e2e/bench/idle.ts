/**
 * `npm run bench:idle`: what the whole stack burns with no traffic at all. Starts a stack with the
 * services' own defaults (identity, requests, audit, webhooks, the gateway; no test settings), lets
 * it settle (BENCH_IDLE_SETTLE_MS, default 60 s: see `SETTLE_MS`), then reads the CPU of every process that makes it over BENCH_IDLE_SECONDS (default 60):
 * the services and the local infrastructure (`processMeter`, libs/platform's testing). Prints CPU-seconds per process group
 * and the total as a share of one core.
 * Linux only (it reads /proc). The figures go into BENCHMARKS.md ("Idle").
 */
import fs from 'node:fs';
import { cpuSecondsBetween, processMeter } from '@support-desk/platform/testing';
import { ROOT, sleep, startPrivateStack, type Teardownable } from '../src/stack.js';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
/**
 * Idle is measured once start-up is over, and start-up ends later than `/readyz`: V8's memory
 * reducer shrinks each process's heap 30-45 s after it started (two full collections, about 0.1 s
 * of CPU per service each time on this machine, once; profiled in BENCHMARKS.md, issue 37). A
 * window from 10 s counted that one-off as idle burn: most of the figure on a slow day.
 */
const SETTLE_MS = Number(process.env.BENCH_IDLE_SETTLE_MS ?? 60_000);

const teardowns: (() => unknown)[] = [];
const t: Teardownable = { teardown: (fn) => void teardowns.push(fn) };
try {
  await startPrivateStack(t);
  await sleep(SETTLE_MS);
  const meter = processMeter(ROOT);
  const before = meter.read();
  await sleep(SECONDS * 1000);
  const after = meter.read();
  const elapsed = (after.at - before.at) / 1000;
  const figures: Record<string, number> = {};
  let total = 0;
  for (const [group, seconds] of cpuSecondsBetween(before, after)) {
    figures[`${group} (CPU-seconds over ${Math.round(elapsed)} s)`] = seconds;
    total += seconds;
  }
  figures['whole stack (% of one core)'] = Math.round((total / elapsed) * 1000) / 10;
  console.table(figures);
  if (process.env.BENCH_RESULTS_FILE)
    fs.writeFileSync(process.env.BENCH_RESULTS_FILE, JSON.stringify(figures));
} finally {
  for (const fn of teardowns.reverse()) await fn();
}
