import { isDuplicateKeyError } from '@support-desk/platform/core';
import { type Connection, Schema } from 'mongoose';
import { modelOn } from './model.js';

/**
 * Who runs a connection's directory sync, per time slot: `_id` = `<connection>:<slot>`. Claiming a
 * slot is an insert with that unique `_id`, atomic on MongoDB and on FerretDB alike (FerretDB's
 * conditional updates are not: two replicas could both "win" a compare-and-set on an expiry),
 * so of the replicas trying, exactly one gets each slot. The lease rules (which slots a holder
 * claims, when it has lost) are the use case's (use-cases/sync-lease.ts).
 */
export interface SyncLeaseDoc {
  _id: string;
  connection: string;
  slot: number;
  owner: string;
  claimedAt: Date;
}

const SyncLeaseSchema = new Schema<SyncLeaseDoc>(
  {
    _id: { type: String, required: true },
    connection: { type: String, required: true, index: true },
    slot: { type: Number, required: true },
    owner: { type: String, required: true },
    claimedAt: { type: Date, required: true },
  },
  { collection: 'idp_sync_leases', versionKey: false },
);

const leaseId = (connection: string, slot: number) => `${connection}:${slot}`;

export function createSyncLeasesRepository(conn: Connection) {
  const model = modelOn<SyncLeaseDoc>(conn, 'SyncLease', SyncLeaseSchema);
  return {
    /** True when this call claimed the slot, false when another holder has it. */
    async claim(connection: string, slot: number, owner: string, now: Date): Promise<boolean> {
      try {
        await model.create({ _id: leaseId(connection, slot), connection, slot, owner, claimedAt: now });
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },

    /** Gives back slots this holder claimed (by `_id`: nobody else can hold the same one). */
    async release(connection: string, slots: number[]): Promise<void> {
      await Promise.all(slots.map((slot) => model.deleteOne({ _id: leaseId(connection, slot) })));
    },

    /** Forgets slots that have passed (a holder that died leaves its claims behind). */
    async forgetBefore(connection: string, slot: number): Promise<void> {
      await model.deleteMany({ connection, slot: { $lt: slot } });
    },

    /** The holder of a slot, if any (for status and tests). */
    async holder(connection: string, slot: number): Promise<string | null> {
      return (await model.findById(leaseId(connection, slot)).lean())?.owner ?? null;
    },
  };
}
