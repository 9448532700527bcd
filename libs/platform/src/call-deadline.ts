import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';

/**
 * Deadlines (issue 31): every call a service serves has a time budget, and a signal that fires
 * when the budget is spent or when nobody waits for the answer any more (the gateway gave up, the
 * client hung up). Store reads take the remaining time as their `maxTimeMS` (see `store-deadline.ts`),
 * and long work checks the signal between its steps, so nothing runs on after its caller left.
 */

/**
 * The budget the gateway gives a call, in milliseconds, set on every call it forwards: its own
 * upstream timeout less what the call already spent in the gateway. A service never takes more
 * than its own `CALL_TIMEOUT_MS`; a client sending the header directly can only shorten its call.
 */
export const CALL_TIMEOUT_HEADER = 'x-sd-timeout-ms';

/** Kept back from the budget so the answer (even a refusal) reaches the caller before its timeout. */
const ANSWER_MARGIN_MS = 100;

export interface CallBudget {
  /** When the caller stops waiting (epoch ms). */
  deadline: number;
  /** Aborted at the deadline, or as soon as the caller is gone. */
  signal: AbortSignal;
  /**
   * Set once the whole answer went out. Work the call started and that goes on after it (a
   * worker it woke, a timer it set: they inherit its async context) is background work from
   * then on, bound by no deadline of the call's.
   */
  answered?: boolean;
}

const calls = new AsyncLocalStorage<CallBudget>();

/** The budget of the call being served; undefined outside a call (background work has none). */
export const currentCall = (): CallBudget | undefined => {
  const call = calls.getStore();
  return call && !call.answered ? call : undefined;
};

/**
 * Runs `fn` outside any call: for waking background work (a relay, a worker) from inside a call,
 * so that its timers and passes never inherit the call's deadline, nor its abort when the caller
 * leaves.
 */
export const outsideCall = <T>(fn: () => T): T => calls.exit(fn);

/** Runs `fn` with a budget of its own (tests, and work that is not an HTTP call). */
export const withCallBudget = <T>(budget: CallBudget, fn: () => T): T => calls.run(budget, fn);

/** The refusal of a call whose time ran out (or whose caller left) before its work was done. */
export const callTimedOut = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The call ran out of time before it was done; retry later', {
    'retry-after': '1',
  });

/**
 * The milliseconds the current call may still spend (at least 1), or undefined outside a call.
 * Throws the 503 of `callTimedOut` once the time is up or the caller is gone: no new store work
 * starts for a call nobody waits for.
 */
export function remainingCallMs(): number | undefined {
  const call = currentCall();
  if (!call) return undefined;
  const left = call.deadline - Date.now();
  if (call.signal.aborted || left <= 0) throw callTimedOut();
  return Math.max(1, Math.floor(left));
}

/** Throws when the current call's time is up or its caller gone (between the steps of long work). */
export function checkCallBudget(): void {
  remainingCallMs();
}

/** The budget a call asks for (the gateway's header), bounded by the service's own maximum. */
function askedBudget(request: FastifyRequest, maxMs: number): number {
  const raw = request.headers[CALL_TIMEOUT_HEADER];
  const asked = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  return Number.isFinite(asked) && asked > 0 ? Math.min(asked, maxMs) : maxMs;
}

/**
 * Gives every call of `app` a budget of `maxMs` (or less, as the gateway's header says), minus
 * a margin for the answer; its signal aborts at the deadline and when the connection closes
 * before the answer was sent. Health routes are calls too, but they ask nothing of the store.
 */
// Any fastify instance, not http.ts's HttpApp: http.ts answers the deadline's errors and so depends
// on this module (through store-deadline.ts).
export function registerCallDeadlines(app: FastifyInstance, { maxMs }: { maxMs: number }): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    // An upload's time is the client's sending it (bounded by the gateway's body timeout), not
    // store work: a slow link must not turn a whole upload into a 503 at its last step.
    if (request.routeOptions.config?.streamedBody) {
      done();
      return;
    }
    const budget = Math.max(1, askedBudget(request, maxMs) - ANSWER_MARGIN_MS);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('deadline')), budget);
    timer.unref();
    const call: CallBudget = { deadline: Date.now() + budget, signal: controller.signal };
    reply.raw.once('close', () => {
      clearTimeout(timer);
      // Closed before the whole answer went out: the caller is gone, stop what is left.
      if (!reply.raw.writableFinished) controller.abort(new Error('caller gone'));
      else call.answered = true;
    });
    calls.run(call, done);
  });
}
