/**
 * Serialises writes to one aggregate within this process.
 *
 * MongoDB applies each single-document update atomically; FerretDB v1 (our local store) does not:
 * concurrent updates of one document lose each other's changes (measured: 20 of 20 runs of three
 * concurrent `updateOne`s lost at least one). The outbox relay's clean-up write races with use-case
 * writes to the same aggregate, so every write to an outbox aggregate and the relay's clean-up go
 * through this per-aggregate queue. Across processes MongoDB's atomicity is what protects us.
 */
const tails = new Map<string, Promise<void>>();

export async function acquireAggregateLock(key: string): Promise<() => void> {
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

export async function withAggregateLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const release = await acquireAggregateLock(key);
  try {
    return await fn();
  } finally {
    release();
  }
}

/** What a mongoose collection exposes that names it: its database and its name. */
export interface NamedCollection {
  collectionName: string;
  conn?: { name?: string };
}

/**
 * A collection's key within this process: database and name, so that two services (or two test
 * databases) in one process with a collection of the same name never share a lock or pending ids.
 */
export const collectionKey = (collection: NamedCollection) =>
  `${collection.conn?.name ?? ''}.${collection.collectionName}`;

export const aggregateKey = (collection: NamedCollection, id: unknown) =>
  `${collectionKey(collection)}:${String(id)}`;
