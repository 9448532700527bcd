import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sessionBinding } from '../use-cases/login.js';
import { acceptForms, cookieName, type FormBody } from './forms.js';

/** identity's browser session cookie (the OAuth pages' and the settings console's). */
const SESSION_COOKIE = 'sd_session';
const CSRF_COOKIE = 'sd_csrf';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The page a form post with a missing or wrong CSRF token gets (nothing was changed). */
    csrfRefused?: (request: FastifyRequest, reply: FastifyReply) => unknown;
  }
}

export interface BrowserForms {
  /** The visitor's session cookie, if any. */
  session(request: FastifyRequest): string | undefined;
  /** Sets (a token) or clears ('') the session cookie. */
  setSession(reply: FastifyReply, token: string, maxAgeSeconds: number): void;
  /**
   * A CSRF token for the page's forms, bound to the session the request carries, or to
   * `session` when this very answer signs in.
   */
  token(request: FastifyRequest, reply: FastifyReply, session?: string): string;
}

const CSRF_REFUSALS = new Set(['FST_CSRF_INVALID_TOKEN', 'FST_CSRF_MISSING_SECRET']);

/**
 * The cookies and the CSRF protection of identity's browser pages (the OAuth sign-in and consent
 * pages, the settings console), with fastify's maintained plugins: @fastify/cookie reads and
 * writes the cookies, @fastify/csrf-protection makes and checks the tokens. Its secret lives in
 * an HttpOnly SameSite=Lax cookie (`__Host-` and Secure under https); each form carries a token
 * derived from it and from the session (an HMAC of the session's id with the deployment's key,
 * `sessionBinding`), checked on every POST before the handler runs. A page refuses a bad token
 * with its route's `csrfRefused` page, or `refused` (nothing is changed).
 */
export async function registerBrowserForms(
  scope: FastifyInstance,
  opts: {
    secure: boolean;
    hmacKey: string;
    refused: (request: FastifyRequest, reply: FastifyReply) => unknown;
  },
): Promise<BrowserForms> {
  const { secure } = opts;
  const sessionName = cookieName(SESSION_COOKIE, secure);
  const session = (request: FastifyRequest) => request.cookies[sessionName];
  await scope.register(fastifyCookie);
  await scope.register(fastifyCsrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: cookieName(CSRF_COOKIE, secure),
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'lax', secure },
    getToken: (request) => {
      const sent = (request.body as FormBody | undefined)?.csrf_token;
      return typeof sent === 'string' ? sent : undefined;
    },
    getUserInfo: (request) => sessionBinding(session(request)),
    csrfOpts: { hmacKey: opts.hmacKey },
  });
  acceptForms(scope);
  scope.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'POST') scope.csrfProtection(request, reply, done);
    else done();
  });
  scope.setErrorHandler((error: Error & { code?: string }, request, reply) => {
    if (!CSRF_REFUSALS.has(error.code ?? '')) throw error;
    return (request.routeOptions.config.csrfRefused ?? opts.refused)(request, reply);
  });
  // A page asks once per form; a visitor without a secret yet gets one, and every form of the
  // answer must carry a token of that same secret.
  const made = new WeakMap<FastifyReply, Map<string, string>>();
  return {
    session,
    setSession(reply, token, maxAgeSeconds) {
      const attributes = { path: '/', httpOnly: true, sameSite: 'lax', secure } as const;
      if (token) reply.setCookie(sessionName, token, { ...attributes, maxAge: maxAgeSeconds });
      else reply.clearCookie(sessionName, attributes);
    },
    token(request, reply, signingIn) {
      const userInfo = sessionBinding(signingIn ?? session(request));
      const tokens = made.get(reply) ?? new Map<string, string>();
      made.set(reply, tokens);
      const token = tokens.get(userInfo) ?? reply.generateCsrf({ userInfo });
      tokens.set(userInfo, token);
      return token;
    },
  };
}
