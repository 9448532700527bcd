import { randomUUID } from 'node:crypto';
import { AppError } from './errors.js';

/**
 * Serialises writes to one aggregate within this process, and, when store locks are on, across
 * processes too.
 *
 * MongoDB applies each single-document update atomically; FerretDB v1 (our local store) does not:
 * concurrent updates of one document lose each other's changes (measured: 20 of 20 runs of three
 * concurrent `updateOne`s lost at least one). The outbox relay's clean-up write races with use-case
 * writes to the same aggregate, so every write to an outbox aggregate and the relay's clean-up go
 * through this per-aggregate queue. Across processes MongoDB's atomicity is what protects us; on
 * the local store with several replicas (`STORE_WRITE_LOCKS=true`, set by `npm start --replicas`
 * and the replicated test stacks) a lock document per aggregate, taken by an insert with a
 * unique `_id` (atomic on both stores), serialises the writers of all processes.
 */
const tails = new Map<string, Promise<void>>();

/** A database's driver handle: where the store lock documents live. */
export interface LockStore {
  collection(name: string): {
    insertOne(doc: Record<string, unknown>): Promise<unknown>;
    deleteOne(filter: Record<string, unknown>): Promise<unknown>;
  };
}

let storeLocks = false;
/** Turns the cross-process store lock on or off (a process-wide setting, from STORE_WRITE_LOCKS). */
export function useStoreLocks(on: boolean): void {
  storeLocks = on;
}

const LOCKS_COLLECTION = 'aggregate_locks';
/** A holder that died keeps its lock this long at most (a write holds it for milliseconds). */
const STORE_LOCK_TTL_MS = 5_000;
/** How long a writer waits for another process's lock before giving up. */
const STORE_LOCK_WAIT_MS = 10_000;

async function acquireStoreLock(db: LockStore, key: string): Promise<() => Promise<void>> {
  const locks = db.collection(LOCKS_COLLECTION);
  const token = randomUUID();
  const deadline = Date.now() + STORE_LOCK_WAIT_MS;
  for (;;) {
    const now = Date.now();
    try {
      await locks.insertOne({ _id: key, token, expiresAt: new Date(now + STORE_LOCK_TTL_MS) });
      return async () => {
        await locks.deleteOne({ _id: key, token }).catch(() => undefined);
      };
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
    // Held by another process: wait, and clear it if its holder died with it.
    await locks.deleteOne({ _id: key, expiresAt: { $lt: new Date(now) } }).catch(() => undefined);
    if (Date.now() > deadline) {
      throw new AppError('SERVICE_UNAVAILABLE', 'The resource is busy; retry in a moment', {
        'retry-after': '1',
      });
    }
    await new Promise((r) => setTimeout(r, 2 + Math.random() * 8));
  }
}

export async function acquireAggregateLock(key: string, db?: LockStore): Promise<() => void> {
  const releaseLocal = await acquireLocal(key);
  if (!storeLocks || !db) return releaseLocal;
  let releaseStore: () => Promise<void>;
  try {
    releaseStore = await acquireStoreLock(db, key);
  } catch (err) {
    releaseLocal();
    throw err;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // The next local writer waits for the store lock to be gone, not only for this call.
    void releaseStore().finally(releaseLocal);
  };
}

async function acquireLocal(key: string): Promise<() => void> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  await previous;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
    if (tails.get(key) === tail) tails.delete(key);
  };
}

/** What a mongoose collection exposes that names it: its database and its name. */
export interface NamedCollection {
  collectionName: string;
  conn?: { name?: string; db?: LockStore };
}

/** The database a collection's store locks live in. */
export const lockStoreOf = (collection: NamedCollection): LockStore | undefined => collection.conn?.db;

/**
 * A collection's key within this process: database and name, so that two services (or two test
 * databases) in one process with a collection of the same name never share a lock or pending ids.
 */
export const collectionKey = (collection: NamedCollection) =>
  `${collection.conn?.name ?? ''}.${collection.collectionName}`;

export const aggregateKey = (collection: NamedCollection, id: unknown) =>
  `${collectionKey(collection)}:${String(id)}`;
