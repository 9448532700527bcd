import type { PublicRoute } from '@support-desk/contracts';
import type { Caller } from '../use-cases/authenticator.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on proxied /v1 routes. */
    caller?: Caller;
    /** The path (rebuilt from the matched route) and query forwarded to the service. */
    forwardUrl: string;
    /** Signed principal assertion sent upstream. */
    principalAssertion?: string;
    /** Signed forwarding assertion sent upstream on OAuth calls (the client's address). */
    forwardedAssertion?: string;
    /** Set when a streamed body went over its limit: the 413's message (instead of a 502). */
    bodyTooLarge?: string;
    /** The log level to restore once a client's hang-up is recorded (see `quietUntilRecorded`). */
    quietLogLevel?: string;
    /** The Idempotency-Key claim this call holds until its answer is stored (or dropped). */
    idempotency?: { credential: string; key: string; claim: string };
  }
  interface FastifyContextConfig {
    publicRoute?: PublicRoute;
  }
}
