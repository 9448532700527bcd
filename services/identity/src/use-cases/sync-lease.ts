import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Repositories } from '../store/index.js';

type SyncLeasesRepository = Repositories['syncLeases'];

/**
 * The lease that lets exactly one replica (or deskctl) sync a connection at a time. Time is cut
 * into slots of LEASE_SLOT_MS; a holder owns the current slot and the next one, each claimed by a
 * unique insert, and renews by claiming the next slot before the current one ends. Another
 * replica trying meanwhile finds the current slot taken. A holder that dies stops renewing, so
 * its claims run out within two slots; a holder that renews too late finds its next slot claimed
 * by someone else, or a slot it never claimed, and stops (`renew` answers false) before writing
 * anything more.
 */
export const LEASE_SLOT_MS = 60_000;

export interface SyncLease {
  owner: string;
  /** Keeps the lease; false when it was lost (the caller must stop writing). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

const leaseOwner = () => `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

export async function acquireSyncLease(
  leases: SyncLeasesRepository,
  connection: string,
  clock: () => Date,
  owner = leaseOwner(),
): Promise<SyncLease | null> {
  const slotAt = () => Math.floor(clock().getTime() / LEASE_SLOT_MS);
  const held = new Set<number>();
  const claim = async (slot: number) => {
    if (held.has(slot)) return true;
    if (!(await leases.claim(connection, slot, owner, clock()))) return false;
    held.add(slot);
    return true;
  };
  const release = async () => {
    const slots = [...held];
    held.clear();
    await leases.release(connection, slots);
  };

  const now = slotAt();
  await leases.forgetBefore(connection, now - 1);
  if (!(await claim(now)) || !(await claim(now + 1))) {
    await release();
    return null;
  }
  return {
    owner,
    async renew() {
      const slot = slotAt();
      // The current slot must have been claimed in advance: a gap means another holder could
      // have run in between, and what this one planned may be stale.
      const ok = held.has(slot) && (await claim(slot + 1));
      if (!ok) await release();
      return ok;
    },
    release,
  };
}
