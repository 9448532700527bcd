import cliProgress from 'cli-progress';

/**
 * How a run shows it is alive: on a terminal a progress bar (cli-progress: maintained, the most
 * used one) with counts and an ETA; otherwise (a pipe, a log file, CI) a plain line every tenth of
 * the run or every 10 s, whichever comes first. Both on standard error: standard output keeps the
 * result (text or --json) alone.
 */
export interface Progress {
  /** `done` of `total` requests finished, `apiCalls` made so far. */
  update(done: number, total: number, apiCalls: number): void;
  stop(): void;
}

const LINE_EVERY_MS = 10_000;

const seconds = (ms: number) =>
  ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;

export function progressReporter(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format:
          'seeding {bar} {value}/{total} requests | {calls} API calls | {duration_formatted} | ETA {eta_formatted}',
        hideCursor: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(done, total, apiCalls) {
        if (!started) bar.start(total, done, { calls: apiCalls });
        started = true;
        bar.update(done, { calls: apiCalls });
      },
      stop: () => started && bar.stop(),
    };
  }
  const start = Date.now();
  let first: number | null = null;
  let lastLine = 0;
  let lastTenth = -1;
  return {
    update(done, total, apiCalls) {
      first ??= done;
      const now = Date.now();
      const tenth = Math.floor((done * 10) / Math.max(total, 1));
      if (tenth === lastTenth && now - lastLine < LINE_EVERY_MS && done < total) return;
      lastTenth = tenth;
      lastLine = now;
      // The rate of this attempt (a resumed run's earlier requests took no time now).
      const rate = (done - first) / Math.max(now - start, 1);
      const eta = done >= total ? 'done' : rate > 0 ? `ETA ${seconds((total - done) / rate)}` : 'ETA unknown';
      stream.write(
        `sd-seed: ${done}/${total} requests (${Math.round((done * 100) / Math.max(total, 1))}%), ${apiCalls} API calls, ${eta}\n`,
      );
    },
    stop: () => undefined,
  };
}
