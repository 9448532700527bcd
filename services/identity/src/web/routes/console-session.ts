import { ERROR_STATUS } from '@support-desk/contracts';
import { adminActorOf } from '@support-desk/platform/clients';
import { isAppError } from '@support-desk/platform/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { CONSOLE_JS, DESK_CSS, FAVICON_SVG } from '../assets.js';
import type { BrowserForms } from '../session.js';
import { type FormBody, param } from '../forms.js';
import { CONSOLE_PAGE_HEADERS, renderDocument } from '../pages/layout.js';
import { loginPage } from '../pages/oauth.js';
import { type Frame, formExpiredPage, refusedPage } from '../pages/frame.js';
import type { Deps } from '../../use-cases/deps.js';
import { login, logout, oauthContext, signedIn } from '../../use-cases/login.js';
import type { UserDoc } from '../../store/index.js';

/** The signed-in administrator of a console request, with what their pages need. */
export interface Admin {
  user: UserDoc;
  frame: Frame;
}

const CONSOLE_HOME = '/settings/api-keys';

/**
 * Where sign-in may send an administrator back to: a console page of this origin, as a path and
 * query only (`/settings/…`), never the sign-in or sign-out itself. Anything else (another
 * origin, `//host`, backslashes, a path that leaves /settings once resolved) is null, so the
 * sign-in goes to the console's first page: no open redirect.
 */
function safeReturnPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2000 || !value.startsWith('/settings')) return null;
  // Backslashes (some browsers read them as slashes), white space and control characters.
  if ([...value].some((c) => c === '\\' || c <= ' ' || c === '\u007f')) return null;
  let url: URL;
  try {
    url = new URL(value, 'http://console.invalid');
  } catch {
    return null;
  }
  if (url.origin !== 'http://console.invalid' || url.hash) return null;
  if (url.pathname !== '/settings' && !url.pathname.startsWith('/settings/')) return null;
  if (url.pathname === '/settings/login' || url.pathname === '/settings/logout') return null;
  return `${url.pathname}${url.search}`;
}

/** The sign-in address that brings a signed-out GET back to its page (the home page needs none). */
function signInFor(request: FastifyRequest, extra = ''): string {
  const back = request.method === 'GET' ? safeReturnPath(request.url) : null;
  const params = new URLSearchParams(extra);
  if (back && back !== CONSOLE_HOME) params.set('return_to', back);
  const q = params.toString();
  return q ? `/settings/login?${q}` : '/settings/login';
}
const LOGIN_INTRO = 'Sign in to the settings console. Only administrators can use it.';

/**
 * What every console route shares: the session (identity's login session, also the OAuth
 * pages'), the console's shorter timeout, the admin-only rule, the forms' CSRF tokens (checked
 * before any handler, see web/session.ts), and the page answer.
 */
export function consoleKit(deps: Deps, forms: BrowserForms) {
  const csrf = {
    token: (request: FastifyRequest, reply: FastifyReply, session?: string) =>
      forms.token(request, reply, session),
  };
  const token = (request: FastifyRequest) => forms.session(request);
  const send = (reply: FastifyReply, status: number, page: VNode) =>
    reply.code(status).headers(CONSOLE_PAGE_HEADERS).send(renderDocument(page));
  const meta = (request: FastifyRequest) => ({
    ip: request.clientAddress ?? 'unknown',
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
    requestId: request.id,
  });
  const refuse = (reply: FastifyReply, frame: Frame) => send(reply, 403, refusedPage(frame));

  const context = (request: FastifyRequest, admin: Admin) => {
    const m = meta(request);
    return oauthContext(admin.user, request.clientAddress, m.userAgent, m.requestId, 'console');
  };

  return {
    csrf,
    send,
    meta,
    refuse,
    /** Who changed something, from where: the administrator and the request's address. */
    context,
    /** The same administrator as the actor of another service's admin RPC (webhooks, requests). */
    actor: (request: FastifyRequest, admin: Admin) => adminActorOf(context(request, admin), 'console'),
    /**
     * The signed-in administrator, or null once the request was answered: no or an expired
     * session → the sign-in page; a session older than CONSOLE_SESSION_TTL_SECONDS → sign in
     * again; a user who is not an admin → a refusal. (A form without its CSRF token never gets
     * here: `formExpired` answers it.)
     */
    async administrator(request: FastifyRequest, reply: FastifyReply): Promise<Admin | null> {
      const session = await signedIn(deps, token(request));
      if (!session) {
        reply.redirect(signInFor(request), 303);
        return null;
      }
      const age = deps.clock().getTime() - session.since.getTime();
      if (age > deps.config.CONSOLE_SESSION_TTL_SECONDS * 1000) {
        reply.redirect(signInFor(request, 'timeout=1'), 303);
        return null;
      }
      const frame = { csrf: csrf.token(request, reply), email: session.user.email };
      if (session.user.role !== 'admin') {
        refuse(reply, frame);
        return null;
      }
      return { user: session.user, frame };
    },
    /** A use case's refusal as the page's error and status (400 for bad input, 404, 409…). */
    failure(err: unknown): { status: number; message: string } {
      if (!isAppError(err)) throw err;
      return { status: ERROR_STATUS[err.code as keyof typeof ERROR_STATUS] ?? 400, message: err.message };
    },
    setSession: (reply: FastifyReply, value: string, maxAgeSeconds: number) =>
      forms.setSession(reply, value, maxAgeSeconds),
    token,
  };
}

/** What a console form with a missing or wrong CSRF token gets: nothing was changed. */
export const formExpired = (_request: FastifyRequest, reply: FastifyReply) =>
  reply.code(403).headers(CONSOLE_PAGE_HEADERS).send(renderDocument(formExpiredPage()));

export type ConsoleKit = ReturnType<typeof consoleKit>;

/** Sign-in, sign-out and the entry point of the console, and the pages' static files. */
export function consoleSessionRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  const loginForm = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: { error?: string; intro?: string; email?: string; returnTo?: string | null } = {},
  ) =>
    kit.send(
      reply,
      status,
      loginPage({
        csrf: kit.csrf.token(request, reply),
        action: '/settings/login',
        intro: LOGIN_INTRO,
        ...extra,
        returnTo: extra.returnTo ?? undefined,
      }),
    );

  pages.get('/settings', { config: { public: true } }, async (_request, reply) =>
    reply.redirect(CONSOLE_HOME, 302),
  );

  pages.get('/settings/login', { config: { public: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const returnTo = safeReturnPath(query.return_to);
    if (query.timeout !== undefined)
      return loginForm(request, reply, 200, {
        error: 'Your console session timed out. Sign in again.',
        returnTo,
      });
    if (query.out !== undefined) return loginForm(request, reply, 200, { intro: 'You are signed out.' });
    return loginForm(request, reply, 200, { returnTo });
  });

  /** A sign-in or sign-out form whose CSRF token was missing or wrong: a fresh form, saying why. */
  const expired = (error: string) => (request: FastifyRequest, reply: FastifyReply) =>
    loginForm(request, reply, 403, { error });
  pages.post(
    '/settings/login',
    { config: { public: true, csrfRefused: expired('The form expired; please sign in again.') } },
    async (request, reply) => {
      const body = (request.body ?? {}) as FormBody;
      const email = param(body, 'email');
      const password = param(body, 'password');
      const returnTo = safeReturnPath(param(body, 'return_to'));
      if (typeof email !== 'string' || typeof password !== 'string')
        return loginForm(request, reply, 400, { error: 'Enter your email and password.', returnTo });
      const result = await login(deps, { email, password, ...kit.meta(request) });
      if (!result.ok) {
        if (result.reason === 'throttled') reply.header('retry-after', String(result.retryAfterSeconds));
        const status = { throttled: 429, invalid: 401, inactive: 403 }[result.reason];
        return loginForm(request, reply, status, { email, error: result.message, returnTo });
      }
      kit.setSession(reply, result.sessionToken, deps.config.OAUTH_SESSION_TTL_SECONDS);
      // The sign-out form of the refusal belongs to the session this answer starts.
      if (result.user.role !== 'admin')
        return kit.refuse(reply, {
          csrf: kit.csrf.token(request, reply, result.sessionToken),
          email: result.user.email,
        });
      return reply.redirect(returnTo ?? CONSOLE_HOME, 303);
    },
  );

  pages.post(
    '/settings/logout',
    { config: { public: true, csrfRefused: expired('The sign-out form expired; nothing was changed.') } },
    async (request, reply) => {
      await logout(deps, kit.token(request), kit.meta(request));
      kit.setSession(reply, '', 0);
      return reply.redirect('/settings/login?out=1', 303);
    },
  );

  const asset = (path: string, type: string, body: string) =>
    pages.get(path, { config: { public: true } }, async (_request, reply) =>
      reply
        .headers({
          'content-type': type,
          'cache-control': 'public, max-age=3600',
          'x-content-type-options': 'nosniff',
        })
        .send(body),
    );
  asset('/assets/desk.css', 'text/css; charset=utf-8', DESK_CSS);
  asset('/assets/console.js', 'text/javascript; charset=utf-8', CONSOLE_JS);
  asset('/assets/favicon.svg', 'image/svg+xml', FAVICON_SVG);
}
