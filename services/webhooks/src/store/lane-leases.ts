import { randomUUID } from 'node:crypto';
import { batchedCalls, isDuplicateKeyError } from '@support-desk/platform';
import type { Connection } from 'mongoose';
import { WORKER_BATCHES } from './batches.js';

/**
 * Claims on delivery lanes across replicas. A claim is an insert with the lane as unique `_id`:
 * atomic on MongoDB and on FerretDB alike (a conditional `findOneAndUpdate` is atomic on MongoDB
 * only: FerretDB v1 reads, changes and writes the document back in Go, see DEVELOPERS.md). So
 * one replica at a time attempts a lane's deliveries; a killed replica's claim expires. Claims and
 * releases asked at once (the worker's lanes) go to the store together: one insert, one delete.
 */
export function createLaneLeases(conn: Connection, ttlMs: number) {
  const leases = conn.collection<Lease>('lane_leases');
  /**
   * The first tries of the claims asked at once, in one unordered insert: those that took hold
   * the lane; a duplicate key means another holder (or a dead one's expired claim).
   */
  const insertClaims = batchedCalls(async (claims: Lease[]): Promise<boolean[]> => {
    try {
      await leases.insertMany(claims, { ordered: false });
      return claims.map(() => true);
    } catch (err) {
      const writeErrors = (err as { writeErrors?: WriteError[] | WriteError }).writeErrors;
      const errors = writeErrors === undefined ? [] : [writeErrors].flat();
      if (
        errors.length === 0 ||
        !errors.every((e) => isDuplicateKeyError({ code: e.code, message: e.errmsg }))
      )
        throw err;
      const failed = new Set(errors.map((e) => e.index));
      return claims.map((_, i) => !failed.has(i));
    }
  }, WORKER_BATCHES);
  /** Releases asked at once, in one bulk write (each removes only its own claim). */
  const deleteClaims = batchedCalls(async (owned: Pick<Lease, '_id' | 'token'>[]) => {
    await leases.bulkWrite(
      owned.map((filter) => ({ deleteOne: { filter } })),
      { ordered: false },
    );
    return owned.map(() => undefined);
  }, WORKER_BATCHES);
  return {
    /** A release function when this replica now holds the lane; null when another does. */
    async claim(lane: string, now = new Date()): Promise<(() => Promise<void>) | null> {
      const token = randomUUID();
      const claim = { _id: lane, token, expiresAt: new Date(now.getTime() + ttlMs) };
      for (let attempt = 0; attempt < 2; attempt++) {
        const held = attempt === 0 ? await insertClaims(claim) : await tryInsert(claim);
        if (held) return () => deleteClaims({ _id: lane, token }).catch(() => undefined);
        // Held: clear the claim only if its holder let it expire (died), then try once more.
        const holder = await leases.findOne({ _id: lane });
        if (holder && holder.expiresAt.getTime() > now.getTime()) return null;
        if (holder) await leases.deleteOne({ _id: lane, token: holder.token });
      }
      return null;
    },
  };

  async function tryInsert(claim: Lease): Promise<boolean> {
    try {
      await leases.insertOne(claim);
      return true;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      return false;
    }
  }
}

interface Lease {
  _id: string;
  token: string;
  expiresAt: Date;
}

/** One failed insert of an unordered `insertMany` (the driver's `WriteError`: index and code). */
interface WriteError {
  index: number;
  code?: number;
  errmsg?: string;
}

export type LaneLeases = ReturnType<typeof createLaneLeases>;
