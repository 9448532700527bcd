// One shared stack of an `npm test` run (see stack-pool.ts), in a process of its own that outlives
// the test file that started it:
//   node stack-daemon.js <slot directory>
// It starts the stack with the shared settings, writes `stack.json` once every service is ready,
// and stops the stack (dropping its databases and streams) when npm test ends the run (SIGTERM),
// when the run's owner process is gone, or after IDLE_MS with no file holding the slot's lease.
import fs from 'node:fs';
import { isAlive, releaseLease, slotFiles, takeLease } from './stack-pool.js';
import { SHARED_STACK_ENV, sleep, startPrivateStack } from './stack.js';

const IDLE_MS = Number(process.env.SD_E2E_POOL_IDLE_MS ?? 30_000);
const slot = process.argv[2]!;
const files = slotFiles(slot);
const owner = Number(process.env.SD_E2E_POOL_OWNER) || null;

const teardowns: (() => unknown)[] = [];
let stopping: Promise<void> | null = null;
function stop(why: string): Promise<void> {
  stopping ??= (async () => {
    console.error(`[stack-daemon ${process.pid}] stopping: ${why}`);
    fs.rmSync(files.descriptor, { force: true });
    for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => undefined);
  })();
  return stopping;
}
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.on(signal, () => void stop(signal).then(() => process.exit(0)));

const stack = await startPrivateStack(
  { teardown: (fn) => teardowns.push(fn), passing: () => true },
  { env: SHARED_STACK_ENV },
);
const tmp = `${files.descriptor}.${process.pid}`;
fs.writeFileSync(tmp, JSON.stringify(stack.descriptor));
fs.renameSync(tmp, files.descriptor);
console.error(`[stack-daemon ${process.pid}] ready: ${stack.origin} (${stack.run})`);

let idleSince: number | null = null;
while (!stopping) {
  await sleep(1000);
  if (owner && !isAlive(owner)) {
    await stop(`the run's owner (pid ${owner}) is gone`);
    break;
  }
  const leased = fs.existsSync(files.lease);
  if (leased) idleSince = null;
  else idleSince ??= Date.now();
  // Idle for long enough: take the lease ourselves, so no file can lease the stack while it stops.
  if (idleSince !== null && Date.now() - idleSince > IDLE_MS && takeLease(slot)) {
    await stop(`idle for ${IDLE_MS / 1000} s`);
    releaseLease(slot);
    break;
  }
}
await stopping;
process.exit(0);
