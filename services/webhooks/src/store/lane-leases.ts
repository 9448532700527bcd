import { randomUUID } from 'node:crypto';
import { isDuplicateKeyError } from '@support-desk/platform/core';
import type { Connection } from 'mongoose';

/**
 * Claims on delivery lanes across replicas. A claim is an insert with the lane as unique `_id`:
 * atomic on MongoDB and on FerretDB alike (a conditional `findOneAndUpdate` is atomic on MongoDB
 * only: FerretDB v1 reads, changes and writes the document back in Go, see DEVELOPERS.md). So
 * one replica at a time attempts a lane's deliveries; a killed replica's claim expires.
 */
export function createLaneLeases(conn: Connection, ttlMs: number) {
  const leases = conn.collection<{ _id: string; token: string; expiresAt: Date }>('lane_leases');
  return {
    /** A release function when this replica now holds the lane; null when another does. */
    async claim(lane: string, now = new Date()): Promise<(() => Promise<void>) | null> {
      const token = randomUUID();
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await leases.insertOne({ _id: lane, token, expiresAt: new Date(now.getTime() + ttlMs) });
          return async () => {
            await leases.deleteOne({ _id: lane, token }).catch(() => undefined);
          };
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
        // Held: clear the claim only if its holder let it expire (died), then try once more.
        const held = await leases.findOne({ _id: lane });
        if (held && held.expiresAt.getTime() > now.getTime()) return null;
        if (held) await leases.deleteOne({ _id: lane, token: held.token });
      }
      return null;
    },
  };
}

export type LaneLeases = ReturnType<typeof createLaneLeases>;
