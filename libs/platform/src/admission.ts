import type { FastifyRequest } from 'fastify';
import { registerCallDeadlines } from './call-deadline.js';
import type { AdmissionLimits } from './config.js';
import { errorBody, type HttpApp } from './http.js';
import { shedWhenSaturated } from './loop-pressure.js';
import { counter, gauge } from './metrics.js';

/**
 * Admission and shedding in a service (issue 31). Lists, searches and exports are the calls whose
 * cost grows with what they read; each class has a number of calls it runs at once, per process.
 * A call past it is refused at once, 503 SERVICE_UNAVAILABLE with `Retry-After`, before it asks
 * anything of the store, so the calls that are cheap (single reads, creates, health) keep their
 * share of the store. Nothing waits in a queue: a queue only turns a refusal into a timeout.
 *
 * Beside it, saturation shedding (`loop-pressure.ts`) refuses every call but health with 503 +
 * Retry-After while the event loop's delay stays past `PRESSURE_MAX_EVENT_LOOP_DELAY_MS`.
 */

/** A class of expensive calls, each with its own limit. */
export type WorkClass = 'list' | 'search' | 'export';
export const WORK_CLASSES: readonly WorkClass[] = ['list', 'search', 'export'];

/** A list that searches (`q`, or its alias `search`) is a search; otherwise a list. */
export const listOrSearch = (request: FastifyRequest): WorkClass => {
  const query = request.query as { q?: unknown; search?: unknown } | undefined;
  return query?.q !== undefined || query?.search !== undefined ? 'search' : 'list';
};

/** How a route says what it costs: a class, or a function of the (validated) call. */
export type Admission = WorkClass | ((request: FastifyRequest) => WorkClass | null);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The class of expensive work this route does (see admission.ts); none: a cheap call. */
    admission?: Admission;
  }
}

/** Seconds a refused client is asked to wait: a slot frees as soon as one call ends. */
export const ADMISSION_RETRY_AFTER_S = 1;

const refusals = counter(
  'admission_refusals_total',
  'Calls refused at once because too many of their class were running (or the process was saturated)',
  ['class'],
);
const running = gauge('admission_running', 'Expensive calls running now, by class', ['class']);

const refusalMessage: Record<WorkClass, string> = {
  list: 'Too many lists are being served right now',
  search: 'Too many searches are being served right now',
  export: 'Too many exports are being served right now',
};

/**
 * Deadlines and admission on `app` (before its routes): every call gets its budget
 * (`registerCallDeadlines`), and the limits below.
 */
export async function registerOverloadControls(app: HttpApp, config: AdmissionLimits): Promise<void> {
  registerCallDeadlines(app, { maxMs: config.CALL_TIMEOUT_MS });
  await registerAdmission(app, config);
}

/**
 * Registers the limits on `app` (before its routes). A route joins a class with
 * `config: {admission}`; its slot is taken after validation and given back when the answer has
 * been sent or the caller has gone, whichever comes first.
 */
export async function registerAdmission(
  app: HttpApp,
  limits: Omit<AdmissionLimits, 'CALL_TIMEOUT_MS'>,
): Promise<void> {
  const max: Record<WorkClass, number> = {
    list: limits.LIST_CONCURRENCY,
    search: limits.SEARCH_CONCURRENCY,
    export: limits.EXPORT_CONCURRENCY,
  };
  const inFlight: Record<WorkClass, number> = { list: 0, search: 0, export: 0 };

  if (limits.PRESSURE_MAX_EVENT_LOOP_DELAY_MS > 0) {
    shedWhenSaturated(app, limits.PRESSURE_MAX_EVENT_LOOP_DELAY_MS, (reply) => {
      refusals.inc({ class: 'pressure' });
      return reply
        .code(503)
        .header('retry-after', String(ADMISSION_RETRY_AFTER_S))
        .send(errorBody('SERVICE_UNAVAILABLE', 'The service is overloaded; retry later'));
    });
  }

  app.addHook('preHandler', async (request, reply) => {
    const admission = request.routeOptions.config.admission;
    if (!admission) return;
    const kind = typeof admission === 'function' ? admission(request) : admission;
    if (!kind) return;
    if (inFlight[kind] >= max[kind]) {
      refusals.inc({ class: kind });
      return reply
        .code(503)
        .header('retry-after', String(ADMISSION_RETRY_AFTER_S))
        .send(
          errorBody(
            'SERVICE_UNAVAILABLE',
            `${refusalMessage[kind]}; retry after ${ADMISSION_RETRY_AFTER_S} s`,
          ),
        );
    }
    inFlight[kind]++;
    running.set({ class: kind }, inFlight[kind]);
    let released = false;
    reply.raw.once('close', () => {
      if (released) return;
      released = true;
      inFlight[kind]--;
      running.set({ class: kind }, inFlight[kind]);
    });
  });
}
