/**
 * Runs `complete(batch)` (how many it completed, at most `batch`) until a call completes fewer
 * or `maxBatches` calls ran (a start-up back-fill: the next start goes on); the total completed.
 */
export async function completeInBatches(
  complete: (batch: number) => Promise<number>,
  batch = 100,
  maxBatches = 1000,
): Promise<number> {
  let completed = 0;
  for (let n = 0; n < maxBatches; n++) {
    const done = await complete(batch);
    completed += done;
    if (done < batch) break;
  }
  return completed;
}
