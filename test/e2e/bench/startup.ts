/**
 * `npm run bench:startup`: what the end-to-end suite pays before a test runs,
 * on the infrastructure `npm test` uses. Wall-clock medians of BENCH_STARTUP_RUNS (default 3):
 * a whole stack from spawn to every `/readyz` (and its stop, with its databases dropped), one
 * deskctl process (`--help`, `completion bash`, a usage error: none loads the store, NATS or HTTP
 * libraries; a command that reads the store), and a `deskctl batch` of the six
 * commands that make an admin, an agent and a viewer with their keys (test/e2e/src/actors.ts cast)
 * against six deskctl processes. The figures go into test/README.md.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { cast } from '../src/actors.js';
import { type Stack, startPrivateStack, type Teardownable } from '../src/stack.js';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const seconds = (ms: number) => Math.round(ms) / 1000;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** A stack as a file gets it, and its stop (the teardown drops its databases). */
async function stackRound(): Promise<{ start: number; stack: Stack; stopIt: () => Promise<void> }> {
  const teardowns: (() => unknown)[] = [];
  const t: Teardownable = { teardown: (fn) => teardowns.push(fn) };
  let stack!: Stack;
  const start = await timed(async () => {
    stack = await startPrivateStack(t);
  });
  const stopIt = async () => {
    for (const fn of teardowns.reverse()) await fn();
  };
  return { start, stack, stopIt };
}

const starts: number[] = [];
const stops: number[] = [];
const help: number[] = [];
const completion: number[] = [];
const usageErrors: number[] = [];
const reads: number[] = [];
const batch: number[] = [];
const processes: number[] = [];
for (let run = 0; run < RUNS; run++) {
  const round = await stackRound();
  starts.push(round.start);
  const { stack } = round;
  help.push(await timed(() => stack.deskctl(['--help'], { json: false })));
  completion.push(await timed(() => stack.deskctl(['completion', 'bash'], { json: false })));
  usageErrors.push(await timed(() => stack.deskctl(['users', 'create', '--bogus'], { json: false })));
  reads.push(await timed(() => stack.deskctl(['users', 'list'])));
  batch.push(await timed(() => cast(stack)));
  // The same six commands, one deskctl process each (as the suite ran them before cast used a batch).
  processes.push(
    await timed(async () => {
      for (const role of ['admin', 'agent', 'viewer']) {
        const email = `${role}.${randomBytes(4).toString('hex')}@example.com`;
        await stack.deskctlJson(['users', 'create', '--email', email, '--name', role, '--role', role]);
        await stack.deskctlJson([
          'api-keys',
          'create',
          '--owner',
          email,
          '--name',
          'k',
          '--scopes',
          'requests:read',
        ]);
      }
    }),
  );
  stops.push(await timed(round.stopIt));
}

const figures = {
  'stack start (5 services, every /readyz)': seconds(median(starts)),
  'stack stop (databases dropped)': seconds(median(stops)),
  'deskctl --help': seconds(median(help)),
  'deskctl completion bash': seconds(median(completion)),
  'deskctl usage error (exit 2)': seconds(median(usageErrors)),
  'deskctl users list (reads the store)': seconds(median(reads)),
  'cast: 6 commands, one deskctl batch': seconds(median(batch)),
  'the same 6 commands, 6 deskctl processes': seconds(median(processes)),
};
console.log(`medians of ${RUNS} runs, seconds:`);
for (const [what, s] of Object.entries(figures)) console.log(`  ${what.padEnd(44)} ${s.toFixed(2)}`);
