import { AppError } from '@support-desk/platform/core';
import { CALL_TIMEOUT_HEADER } from '@support-desk/platform/http';
import { counter } from '@support-desk/platform/metrics';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpApp } from '@support-desk/platform/http';

/**
 * The gateway's part of overload control (issue 31): the time budget each forwarded call carries
 * to its service, and the cap on the calls one credential has in flight at once.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** When the gateway stops waiting for the service's answer (epoch ms; see `registerUpstreamBudget`). */
    upstreamDeadline?: number;
  }
}

/**
 * Every call gets its deadline on arrival: `UPSTREAM_TIMEOUT_MS` from then. What is left of it
 * when the call is forwarded goes to the service as `x-sd-timeout-ms`, so the service stops its
 * store work (and answers 503) before the gateway would give up with a 504.
 */
export function registerUpstreamBudget(app: HttpApp, upstreamTimeoutMs: number): void {
  // Callback-style: an async hook would cost every call a promise for one assignment.
  app.addHook('onRequest', (request, _reply, done) => {
    request.upstreamDeadline = Date.now() + upstreamTimeoutMs;
    done();
  });
}

/** The `x-sd-timeout-ms` header of a forwarded call (what is left of its budget; at least 1 ms). */
export function upstreamBudgetHeader(request: FastifyRequest): Record<string, string> {
  if (request.upstreamDeadline === undefined) return {};
  return { [CALL_TIMEOUT_HEADER]: String(Math.max(1, request.upstreamDeadline - Date.now())) };
}

const refusals = counter(
  'gateway_concurrency_refusals_total',
  'Calls refused at once because their credential already had CREDENTIAL_CONCURRENCY calls in flight',
);

/** Seconds a refused client is asked to wait: a slot frees as soon as one of its calls ends. */
const RETRY_AFTER_S = 1;

export interface CredentialConcurrency {
  /**
   * Takes one of `subject`'s slots until the answer to this call is sent (or the client has
   * gone); the 429 to answer instead when every slot is taken.
   */
  admit(subject: string, reply: FastifyReply): AppError | null;
}

/**
 * The cap on calls one credential has in flight, beside its per-minute plan: the plan bounds how
 * many calls a minute, this bounds how many at once, so a burst of a whole minute's quota is
 * mostly refused at once (429 + Retry-After: 1) instead of queueing on the services. Kept in this
 * process: with several gateway replicas, a credential may have up to this many per replica
 * (counting across replicas in Redis would put a round trip and a lease that must outlive a
 * crashed replica on every call; the services' own admission limits bound the total).
 */
export function createCredentialConcurrency(limit: number): CredentialConcurrency {
  const running = new Map<string, number>();
  return {
    admit(subject, reply) {
      const now = running.get(subject) ?? 0;
      if (now >= limit) {
        refusals.inc();
        return new AppError(
          'RATE_LIMITED',
          `Too many calls in flight for this credential: at most ${limit} at once; retry after ${RETRY_AFTER_S} s`,
          { 'retry-after': String(RETRY_AFTER_S) },
        );
      }
      running.set(subject, now + 1);
      reply.raw.once('close', () => {
        const left = (running.get(subject) ?? 1) - 1;
        if (left > 0) running.set(subject, left);
        else running.delete(subject);
      });
      return null;
    },
  };
}
