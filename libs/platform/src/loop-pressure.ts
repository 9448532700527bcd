import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Saturation shedding (issue 31), measured cheaply enough to leave on at idle (issue 37).
 *
 * `@fastify/under-pressure` did this before, but it always runs Node's event-loop-delay sampler
 * at a fixed 10 ms resolution, whatever its options: 100 wake-ups a second in every process,
 * about half of a whole idle stack's CPU (BENCHMARKS.md, issue 37). The measuring here is still
 * Node's own (`perf_hooks.monitorEventLoopDelay`), sampled every `SAMPLE_MS`; each second the
 * mean delay of that second is compared with the limit, and two seconds past it in a row make the
 * process saturated until a second under it: 5 wake-ups a second in all.
 */
const SAMPLE_MS = 250;
const DECIDE_MS = 1000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answers even while the process sheds load (health routes). */
    unshed?: boolean;
  }
}

/** What a refused call gets; the caller writes its own answer (status, headers, body). */
export type Shed = (reply: FastifyReply) => unknown;

/**
 * Sheds every call but the `unshed` routes while the event loop's mean delay has been past
 * `maxDelayMs` in each of the last two seconds. The timer is unref'd and stops with the app.
 */
export function shedWhenSaturated(app: FastifyInstance, maxDelayMs: number, shed: Shed): void {
  const histogram = monitorEventLoopDelay({ resolution: SAMPLE_MS });
  histogram.enable();
  let saturated = false;
  let wasBehind = false;
  // Windowed from the running totals: resetting the histogram would drop the sample that spans a
  // long block (Node starts its next interval afresh after a reset).
  let seen = { count: 0, sumMs: 0 };
  const decide = setInterval(() => {
    const now = { count: histogram.count, sumMs: (histogram.mean / 1e6) * histogram.count };
    const samples = now.count - seen.count;
    // No sample in a whole second: the loop was blocked for all of it. Otherwise the histogram
    // holds whole intervals between samples, so the delay is what exceeds the period.
    const delayMs = samples > 0 ? (now.sumMs - seen.sumMs) / samples - SAMPLE_MS : DECIDE_MS;
    // Saturated: behind for two seconds running. One late second is a stall that is over by the
    // time it is measured (a long synchronous task, a pause of the whole process); shedding then
    // refuses calls the process could serve. Sustained lateness is work arriving faster than it
    // is done, which shedding relieves.
    const behind = delayMs > maxDelayMs;
    saturated = behind && wasBehind;
    wasBehind = behind;
    seen = now;
  }, DECIDE_MS);
  decide.unref();
  app.addHook('onClose', async () => {
    clearInterval(decide);
    histogram.disable();
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!saturated || request.routeOptions.config.unshed) return;
    return shed(reply);
  });
}
