import { errorBody, ok, type HttpApp } from './http.js';

export type HealthCheck = () => Promise<unknown>;

/**
 * How often each dependency is checked, in the background (never on the `/readyz` call's path):
 * every second while it fails (or has not answered yet), every five while it answers. A store
 * ping a second from every process was most of an idle stack's store work (issue 37); five
 * seconds is still well inside the grace below, so a dependency that goes away is `down` as soon
 * as before, and one that comes back is `up` within a second.
 */
const CHECK_INTERVAL_MS = 1000;
const HEALTHY_INTERVALS = 5;
/**
 * How long a dependency must have failed, every check of that time, before readiness turns off:
 * a base plus a random part per process, so replicas sharing a store that blinks do not all
 * leave their Service in the same second. A check still running (a busy store answering slowly)
 * is not a failure: only an error is, or no answer at all for the whole grace.
 */
const DOWN_AFTER_MS = 10_000;

export interface HealthState {
  /** Set while shutting down so load balancers stop sending traffic before the listener closes. */
  draining: boolean;
}

export interface HealthOptions {
  /** Check interval (ms) while a dependency fails; five times it while it answers. Tests shorten it. */
  intervalMs?: number;
  /** How long a dependency fails before it counts as down (ms, before the per-process jitter). */
  downAfterMs?: number;
  /** The most of the random part added to `downAfterMs` (ms; half of it unless given). */
  jitterMs?: number;
}

/**
 * One dependency's state, kept by checks run in the background one at a time. It is `down` only
 * once it has not answered successfully for its grace and its last check failed or is still
 * pending: a slow answer is a busy dependency, and a busy one is not gone.
 */
function monitor(check: HealthCheck, intervalMs: number, graceMs: number) {
  let lastSuccess: number | undefined;
  let failing = false;
  let running = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = true;
    check()
      .then(
        () => {
          lastSuccess = Date.now();
          failing = false;
        },
        () => {
          failing = true;
        },
      )
      .finally(() => {
        running = false;
        if (stopped) return;
        // The next check once this one is over (never two at once), sooner while failing.
        timer = setTimeout(tick, failing ? intervalMs : intervalMs * HEALTHY_INTERVALS);
        timer.unref();
      });
  };
  return {
    start() {
      tick();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    state(): 'up' | 'down' {
      // Never reached since the start (failed, or still waiting): not ready, whatever the grace:
      // a pod must not join its Service before its store has answered once.
      if (lastSuccess === undefined) return 'down';
      const silentFor = Date.now() - lastSuccess;
      return silentFor > graceMs && (failing || running) ? 'down' : 'up';
    },
  };
}

/**
 * `/livez`: the process answers (it never asks a dependency). `/readyz`: every dependency named in
 * `checks` is there, from checks run in the background (every 5 s, every second while one fails): the answer costs no store
 * call and cannot queue behind a busy one. A dependency counts as down only after failing for
 * its grace (10–15 s, jittered per process); a slow check is not a failure.
 */
export function registerHealth(
  app: HttpApp,
  checks: Record<string, HealthCheck>,
  options: HealthOptions = {},
): HealthState {
  const intervalMs = options.intervalMs ?? CHECK_INTERVAL_MS;
  const downAfterMs = options.downAfterMs ?? DOWN_AFTER_MS;
  const graceMs = downAfterMs + Math.random() * (options.jitterMs ?? downAfterMs / 2);
  const monitors = Object.fromEntries(
    Object.entries(checks).map(([name, check]) => [name, monitor(check, intervalMs, graceMs)]),
  );
  for (const m of Object.values(monitors)) m.start();
  app.addHook('onClose', async () => {
    for (const m of Object.values(monitors)) m.stop();
  });
  const state: HealthState = { draining: false };
  // Health answers even when the process sheds load (see admission.ts).
  const config = { unshed: true };
  app.get('/livez', { config }, async () => ok({ status: 'ok' }));
  app.get('/readyz', { config }, async (_request, reply) => {
    if (state.draining) return reply.code(503).send(errorBody('SERVICE_UNAVAILABLE', 'shutting down'));
    const status = Object.fromEntries(Object.entries(monitors).map(([n, m]) => [n, m.state()]));
    const down = Object.keys(status).filter((n) => status[n] === 'down');
    if (down.length > 0) {
      return reply
        .code(503)
        .send(errorBody('SERVICE_UNAVAILABLE', `not ready: ${down.join(', ')} unreachable`));
    }
    return ok({ status: 'ready', checks: status });
  });
  return state;
}
