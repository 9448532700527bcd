/**
 * The most statements one `update` command may carry. FerretDB 1.24 on PostgreSQL holds a pooled
 * connection for each statement of an `update` command until the whole command ends: one bulk
 * write of 60 updates never ends on its pool of 50 (measured: the store stopped answering, even
 * `ping`, all 50 connections idle in PostgreSQL), and two of 25 from two processes wait on each
 * other (a goroutine dump of the webhooks worker's hang). Deletes and inserts do not. Eight keeps
 * the commands of every service sharing the store well inside the pool (the relays publish eight
 * documents at a time there too). MongoDB takes any number; there it costs a round trip a chunk.
 */
export const MAX_UPDATES_PER_COMMAND = 8;

/**
 * Writes `ops` (a bulk write's update statements) in commands of at most
 * `MAX_UPDATES_PER_COMMAND`, one after another: `write` sends one chunk. A failed chunk stops the
 * rest (what was written stays written; callers' writes are safe to repeat).
 */
export async function inUpdateChunks<T>(
  ops: readonly T[],
  write: (chunk: T[]) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < ops.length; i += MAX_UPDATES_PER_COMMAND)
    await write(ops.slice(i, i + MAX_UPDATES_PER_COMMAND));
}
