import { errorBody, ok, type HttpApp } from './http.js';

export type HealthCheck = () => Promise<unknown>;

const CHECK_TIMEOUT_MS = 2000;

async function probe(check: HealthCheck): Promise<'up' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'up';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

export interface HealthState {
  /** Set while shutting down so load balancers stop sending traffic before the listener closes. */
  draining: boolean;
}

/** `/livez`: the process answers. `/readyz`: every dependency named in `checks` answers. */
export function registerHealth(app: HttpApp, checks: Record<string, HealthCheck>): HealthState {
  const state: HealthState = { draining: false };
  app.get('/livez', async () => ok({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((n) => probe(checks[n])));
    const status = Object.fromEntries(names.map((n, i) => [n, results[i]]));
    const down = names.filter((n) => status[n] === 'down');
    if (state.draining) return reply.code(503).send(errorBody('SERVICE_UNAVAILABLE', 'shutting down'));
    if (down.length > 0) {
      return reply
        .code(503)
        .send(errorBody('SERVICE_UNAVAILABLE', `not ready: ${down.join(', ')} unreachable`));
    }
    return ok({ status: 'ready', checks: status });
  });
  return state;
}
