/**
 * The delivery worker's lanes to work again a little later: one timer for them all (at the
 * earliest), and the lanes due by then, give or take half a `pollMs`, woken together.
 */
export function createLaneRetries({
  pollMs,
  clock,
  wake,
}: {
  pollMs: number;
  /** The worker's clock (a holder's lease expiry is on it). */
  clock: () => Date;
  wake: (lanes: string[]) => void;
}) {
  /** Each lane with when (real time, ms). */
  const later = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  /** Lanes found held by another replica, and how many times in a row (the back-off). */
  const takenTries = new Map<string, number>();

  function arm(at: number) {
    clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Infinity;
        const by = Date.now() + pollMs / 2;
        const lanes: string[] = [];
        let earliest = Infinity;
        for (const [lane, when] of later) {
          if (when <= by) {
            lanes.push(lane);
            later.delete(lane);
          } else earliest = Math.min(earliest, when);
        }
        if (earliest < Infinity) arm(earliest);
        if (lanes.length > 0) wake(lanes);
      },
      Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1),
    );
    timer.unref();
  }

  /** The lane again in `delayMs` (an earlier time already set stays). */
  function retry(lane: string, delayMs = pollMs) {
    const at = Date.now() + Math.max(0, delayMs);
    const known = later.get(lane);
    if (known !== undefined && known <= at) return;
    later.set(lane, at);
    if (at < timerAt) arm(at);
  }

  return {
    retry,
    /**
     * A lane another replica holds: a live holder ends its run soon (what was stored after its
     * last read of the lane is this replica's to send), so the lane is tried again after `pollMs`,
     * then less and less often (each claim tried is two store calls), at most 64 × `pollMs`
     * apart, and no later than the holder's lease runs out (a holder that died: taken over then).
     */
    taken(lane: string, heldUntil: Date | null | undefined) {
      const tries = (takenTries.get(lane) ?? 0) + 1;
      takenTries.set(lane, tries);
      const backoff = pollMs * 2 ** Math.min(tries - 1, 6);
      const untilFree = heldUntil ? new Date(heldUntil).getTime() - clock().getTime() + 1 : backoff;
      retry(lane, Math.min(backoff, Math.max(untilFree, pollMs)));
    },
    /** Whether the lane was found held by another replica the last time it was claimed. */
    wasTaken: (lane: string) => takenTries.has(lane),
    /** The lane was worked (not found held): its back-off starts over. */
    worked(lane: string) {
      takenTries.delete(lane);
    },
    clear() {
      clearTimeout(timer);
      timer = undefined;
      timerAt = Infinity;
      later.clear();
      takenTries.clear();
    },
  };
}
