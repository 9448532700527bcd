import { randomUUID } from 'node:crypto';
import { isDuplicateKeyError } from '@support-desk/platform/core';
import { batchedCalls } from '@support-desk/platform/store';
import type { Connection } from 'mongoose';
import { WORKER_BATCHES } from './batches.js';

interface LeaseDoc {
  _id: string;
  token: string;
  expiresAt: Date;
}

/** A lane this replica holds: kept (renewed) for a whole run of the lane, released at its end. */
export interface LaneLease {
  /** When it expires unless renewed (this replica's clock at the claim or renewal, plus the TTL). */
  readonly expiresAt: Date;
  /** Extends it to `now` + the TTL; false when it was lost (expired and taken over meanwhile). */
  renew(now: Date): Promise<boolean>;
  release(): Promise<void>;
}

/** A claim's answer: the lease, or when the other holder's lease runs out. */
export type LaneClaim = { lease: LaneLease } | { heldUntil: Date };

/** The most lease documents a pass reads (in flight: the replicas' lanes at once, and dead ones'). */
const HELD_READ_LIMIT = 5000;

/**
 * Claims on delivery lanes across replicas. A claim is an insert with the lane as unique `_id`:
 * atomic on MongoDB and on FerretDB alike (a conditional update is atomic on MongoDB only: FerretDB
 * v1 reads, changes and writes the document back in Go, see DEVELOPERS.md). So one replica at a
 * time works a lane; a killed replica's claim expires. A claim is single (one insert, one lane): an
 * unordered insert of several claims that met a duplicate key left FerretDB v1.24 on PostgreSQL
 * hung (BENCHMARKS.md, issue 37). The holder keeps its lease for a whole run of the lane, renewing
 * it (by `_id` and its token, only while it is still valid, so no other replica can have taken it
 * over) rather than claiming again per delivery. Releases asked at once go in one unordered
 * bulk write, a deleteOne by lane and token each (the `_id` equality both stores push down): one
 * `deleteMany` by `$in` of the lanes and tokens instead was in 5 of 8 two-replica bench runs that
 * left FerretDB v1.24 hung, the bulk write in none of 3 (BENCHMARKS.md, issue 37).
 */
export function createLaneLeases(conn: Connection, ttlMs: number) {
  const leases = conn.collection<LeaseDoc>('lane_leases');
  const deleteClaims = batchedCalls(async (owned: Pick<LeaseDoc, '_id' | 'token'>[]) => {
    await leases.bulkWrite(
      owned.map((filter) => ({ deleteOne: { filter } })),
      { ordered: false },
    );
    return owned.map(() => undefined);
  }, WORKER_BATCHES);

  function leaseOf(lane: string, token: string, expiresAt: Date): LaneLease {
    let until = expiresAt;
    return {
      get expiresAt() {
        return until;
      },
      async renew(now) {
        const next = new Date(now.getTime() + ttlMs);
        const { matchedCount } = await leases.updateOne({ _id: lane, token }, { $set: { expiresAt: next } });
        if (matchedCount !== 1) return false;
        until = next;
        return true;
      },
      release: () => deleteClaims({ _id: lane, token }).catch(() => undefined),
    };
  }

  return {
    /**
     * Creates the collection at start (an existing one is kept): not by the first claims, which
     * two replicas would race to make, beside each other's index builds.
     */
    prepare: () =>
      conn.createCollection('lane_leases').then(
        () => undefined,
        () => undefined,
      ),

    /**
     * The lane's lease when this replica now holds it; else when the holder's runs out. With
     * `expectHeld` (it was held the last time), the claim is read first and no insert is tried
     * while it holds: a duplicate key costs FerretDB more than a read, and its v1.24 stopped
     * answering after a run of them (BENCHMARKS.md, issue 37).
     */
    async claim(lane: string, now = new Date(), { expectHeld = false } = {}): Promise<LaneClaim> {
      const token = randomUUID();
      const expiresAt = new Date(now.getTime() + ttlMs);
      if (expectHeld) {
        const held = await leases.findOne({ _id: lane });
        if (held && held.expiresAt.getTime() > now.getTime()) return { heldUntil: held.expiresAt };
        if (held) await leases.deleteOne({ _id: lane, token: held.token });
      }
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await leases.insertOne({ _id: lane, token, expiresAt });
          return { lease: leaseOf(lane, token, expiresAt) };
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
        // Held: clear the claim only if its holder let it expire (died), then try once more.
        const held = await leases.findOne({ _id: lane });
        if (held && held.expiresAt.getTime() > now.getTime()) return { heldUntil: held.expiresAt };
        if (held) await leases.deleteOne({ _id: lane, token: held.token });
      }
      // Taken over by another replica between the two tries: its lease has about the same time.
      return { heldUntil: expiresAt };
    },

    /**
     * The lanes claimed now, by any replica, with their expiry: those expired were left by a
     * replica that died mid-lane (its deliveries are worked again from them, see the worker).
     */
    held: () =>
      leases
        .find({}, { projection: { _id: 1, expiresAt: 1 } })
        .limit(HELD_READ_LIMIT)
        .toArray() as Promise<Pick<LeaseDoc, '_id' | 'expiresAt'>[]>,
  };
}

export type LaneLeases = ReturnType<typeof createLaneLeases>;
