import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stackClients, tailOf, tailsOf } from './stack-clients.js';
import type { Teardownable } from '@support-desk/platform/testing';
import type { Stack, StackDescriptor } from './stack-types.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Shared stacks: `npm test` (scripts/test.mjs) gives the run a pool directory (SD_E2E_POOL) with
// as many slots as it runs files at once (SD_E2E_POOL_SLOTS). A file that asks for a plain stack
// leases a free slot (an atomic mkdir of `<slot>/lease`); the slot's stack is started once, by the
// first file that needs it, as a detached daemon (stack-daemon.ts) that outlives the file, and is
// used by one file at a time. The daemon stops its stack when the run's owner is gone, when
// npm test ends the run, or after IDLE_MS with no lease (so idle stacks do not burn the machine
// while only private stacks run). Data stays apart by each file's own names (`stack.tag`).

/** How long a file waits for a free slot or a starting stack before it fails. */
const LEASE_TIMEOUT_MS = 180_000;
const DAEMON = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stack-daemon.js');

export const slotFiles = (slot: string) => ({
  lease: path.join(slot, 'lease'),
  holder: path.join(slot, 'lease', 'holder'),
  descriptor: path.join(slot, 'stack.json'),
  daemonPid: path.join(slot, 'daemon.pid'),
  daemonLog: path.join(slot, 'daemon.log'),
});

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const readPid = (file: string) => {
  try {
    return Number(fs.readFileSync(file, 'utf8')) || null;
  } catch {
    return null;
  }
};

/**
 * Takes the slot's lease for `pid`, or takes over one whose holder died (a file killed by its
 * time limit never releases it). True when this process now holds it.
 */
export function takeLease(slot: string, pid = process.pid): boolean {
  const f = slotFiles(slot);
  try {
    fs.mkdirSync(f.lease);
  } catch {
    const holder = readPid(f.holder);
    // A lease being taken has no holder file for a moment: leave it alone.
    if (holder === null || isAlive(holder)) return false;
    // Renamed away first, so of two processes taking over the same dead lease only one succeeds.
    try {
      fs.renameSync(f.lease, `${f.lease}.dead-${pid}`);
      fs.rmSync(`${f.lease}.dead-${pid}`, { recursive: true, force: true });
      fs.mkdirSync(f.lease);
    } catch {
      return false;
    }
  }
  fs.writeFileSync(f.holder, String(pid));
  return true;
}

export const releaseLease = (slot: string) =>
  fs.rmSync(slotFiles(slot).lease, { recursive: true, force: true });

function readDescriptor(slot: string): StackDescriptor | null {
  try {
    return JSON.parse(fs.readFileSync(slotFiles(slot).descriptor, 'utf8')) as StackDescriptor;
  } catch {
    return null;
  }
}

/** The slot's stack, started by a new daemon unless a live one already serves it. */
async function stackOf(slot: string): Promise<StackDescriptor> {
  const f = slotFiles(slot);
  const running = readPid(f.daemonPid);
  const ready = readDescriptor(slot);
  if (running && isAlive(running) && ready) return ready;
  // A daemon that is still stopping (idle, or the previous holder's) must be gone first.
  const deadline = Date.now() + 30_000;
  while (running && isAlive(running) && Date.now() < deadline) await sleep(100);
  fs.rmSync(f.descriptor, { force: true });
  const log = fs.openSync(f.daemonLog, 'a');
  const daemon = spawn(process.execPath, ['--enable-source-maps', DAEMON, slot], {
    detached: true,
    stdio: ['ignore', log, log],
    env: process.env,
  });
  fs.closeSync(log);
  daemon.unref();
  fs.writeFileSync(f.daemonPid, String(daemon.pid));
  const startDeadline = Date.now() + LEASE_TIMEOUT_MS;
  for (;;) {
    const d = readDescriptor(slot);
    if (d) return d;
    if (!isAlive(daemon.pid!)) throw new Error(`the shared stack did not start:\n${tailOf(f.daemonLog, 80)}`);
    if (Date.now() > startDeadline)
      throw new Error(`the shared stack did not start in time:\n${tailOf(f.daemonLog, 80)}`);
    await sleep(100);
  }
}

/** Leases a shared stack of the run's pool for this file (until its teardown). */
export async function leaseSharedStack(t: Teardownable, pool: string): Promise<Stack> {
  const slots = Math.max(1, Number(process.env.SD_E2E_POOL_SLOTS) || 2);
  const deadline = Date.now() + LEASE_TIMEOUT_MS;
  let slot: string | null = null;
  while (!slot) {
    for (let n = 1; n <= slots && !slot; n++) {
      const candidate = path.join(pool, `shared-${n}`);
      fs.mkdirSync(candidate, { recursive: true });
      if (takeLease(candidate)) slot = candidate;
    }
    if (slot) break;
    if (Date.now() > deadline)
      throw new Error(`no shared stack slot came free in ${LEASE_TIMEOUT_MS} ms (${pool})`);
    await sleep(250);
  }
  const leased = slot;
  let descriptor: StackDescriptor;
  try {
    descriptor = await stackOf(leased);
  } catch (err) {
    releaseLease(leased);
    throw err;
  }
  t.teardown(() => {
    if (t.passing && !t.passing())
      console.error(`\n[e2e ${descriptor.run}] service logs (failing run):\n${tailsOf(descriptor)}`);
    releaseLease(leased);
  });
  const refuse = (what: string) => () =>
    Promise.reject(
      new Error(
        `${what}: this file runs on a shared stack; ask for a private one (startStack(t, { private: true }))`,
      ),
    );
  return {
    ...stackClients(descriptor),
    tag: `${descriptor.run}${randomBytes(3).toString('hex')}`,
    shared: true,
    descriptor,
    restart: refuse('restart'),
    stopService: refuse('stopService'),
    stop: refuse('stop'),
  };
}
