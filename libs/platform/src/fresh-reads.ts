import { outsideCall } from './call-deadline.js';

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

/**
 * The same for calls that each bring an argument: those made while a batch runs are gathered into
 * the next, which `run` serves with one store call for them all (its answers in the order of the
 * arguments). A caller alone runs at once; under load, one call serves a whole burst (the webhook
 * worker's lanes: 32 at once cost one claim, one read, one write each, not 32). A failed batch
 * fails the callers in it. With `lingerMs`, a batch waits that long for more callers first (calls
 * that come a few milliseconds apart, as lanes that started together drift apart). Batches run
 * outside any call (`outsideCall`): for background work (a worker), not for reads that must keep a
 * call's deadline.
 */
export function batchedCalls<A, R>(
  run: (args: A[]) => Promise<R[]>,
  { lingerMs = 0 }: { lingerMs?: number } = {},
): (arg: A) => Promise<R> {
  let running = false;
  let lingering: NodeJS.Timeout | undefined;
  let queued: { arg: A; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  const send = () => {
    lingering = undefined;
    const batch = queued;
    queued = [];
    running = true;
    // A batch belongs to no one call: it never takes its first caller's deadline or abort.
    outsideCall(() => run(batch.map((c) => c.arg)))
      .then(
        (results) => batch.forEach((c, i) => c.resolve(results[i]!)),
        (err: unknown) => batch.forEach((c) => c.reject(err)),
      )
      .finally(() => {
        running = false;
        drain();
      });
  };
  const drain = () => {
    if (running || lingering || queued.length === 0) return;
    if (lingerMs <= 0) return send();
    lingering = setTimeout(send, lingerMs);
  };
  return (arg) =>
    new Promise<R>((resolve, reject) => {
      queued.push({ arg, resolve, reject });
      drain();
    });
}
