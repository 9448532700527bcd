/**
 * Shares one read among concurrent callers without ever answering from before a call: a caller
 * joins the read that starts next, never one already under way (it may predate a write the caller
 * must see). So a burst of callers during one read shares the single read after it, and a caller
 * alone reads at once (unlike `singleFlight`, which joins a look-up under way). A failed read
 * fails the callers that shared it.
 */
export function freshReads<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const p: Promise<T> = read().finally(() => {
      if (running === p) running = undefined;
    });
    running = p;
    return p;
  };
  return () => {
    if (!running) return start();
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}
