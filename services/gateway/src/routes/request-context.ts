import type { PublicRoute } from '@support-desk/contracts';
import type { Caller } from '../use-cases/authenticator.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on proxied /v1 routes. */
    caller?: Caller;
    /** Signed principal assertion sent upstream. */
    principalAssertion?: string;
    /** Set when a streamed body went over its limit (renders 413 instead of 502). */
    bodyTooLarge?: boolean;
  }
  interface FastifyContextConfig {
    publicRoute?: PublicRoute;
  }
}
