import { ERROR_STATUS } from '@support-desk/contracts';
import { isAppError } from '@support-desk/platform';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_JS, DESK_CSS } from '../oauth/assets.js';
import { cookie, cookieName, csrfProtection, type FormBody, param, setCookie } from '../oauth/forms.js';
import { CONSOLE_PAGE_HEADERS, layout } from '../oauth/page-layout.js';
import { loginPage } from '../oauth/pages.js';
import { type Frame, refusedBody, csrfField } from '../console/frame.js';
import type { Deps } from '../use-cases/deps.js';
import { login, logout, oauthContext, signedIn } from '../use-cases/login.js';
import type { UserDoc } from '../store/index.js';
import { SESSION_COOKIE } from './oauth-pages.js';

/** The signed-in administrator of a console request, with what their pages need. */
export interface Admin {
  user: UserDoc;
  frame: Frame;
}

/** One text field of a form ('' when absent or repeated). */
export const field = (body: FormBody, name: string) => {
  const v = body[name];
  return typeof v === 'string' ? v.trim() : '';
};
/** A field that may repeat (checkboxes). */
export const fields = (body: FormBody, name: string) => {
  const v = body[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};
export const query = (q: unknown, name: string) => {
  const v = (q as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
};
const CONSOLE_HOME = '/settings/api-keys';
const LOGIN_INTRO = 'Sign in to the settings console. Only administrators can use it.';

/**
 * What every console route shares: the session (identity's login session, also the OAuth
 * pages'), the console's shorter timeout, the admin-only rule, CSRF, and the page answer.
 */
export function consoleKit(deps: Deps) {
  const secure = deps.config.OAUTH_ISSUER.startsWith('https://');
  const csrf = csrfProtection(secure);
  const token = (request: FastifyRequest) => cookie(request, cookieName(SESSION_COOKIE, secure));
  const send = (reply: FastifyReply, status: number, page: string) =>
    reply.code(status).headers(CONSOLE_PAGE_HEADERS).send(page);
  const meta = (request: FastifyRequest) => ({
    ip: request.clientAddress ?? 'unknown',
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
    requestId: request.id,
  });
  const refuse = (reply: FastifyReply, frame: Frame) =>
    send(
      reply,
      403,
      layout(
        'Administrators only',
        `${refusedBody(frame.email)}<form method="post" action="/settings/logout">${csrfField(frame.csrf)}<button type="submit">Sign out</button></form>`,
      ),
    );

  return {
    csrf,
    send,
    meta,
    refuse,
    /** Who changed something, from where: the administrator and the request's address. */
    context: (request: FastifyRequest, admin: Admin) => {
      const m = meta(request);
      return oauthContext(admin.user, request.clientAddress, m.userAgent, m.requestId, 'console');
    },
    /**
     * The signed-in administrator, or null once the request was answered: no or an expired
     * session → the sign-in page; a session older than CONSOLE_SESSION_TTL_SECONDS → sign in
     * again; a user who is not an admin → a refusal; a form without its CSRF token → a refusal
     * that changes nothing.
     */
    async administrator(request: FastifyRequest, reply: FastifyReply): Promise<Admin | null> {
      const session = await signedIn(deps, token(request));
      if (!session) {
        reply.redirect('/settings/login', 303);
        return null;
      }
      const age = deps.clock().getTime() - session.since.getTime();
      if (age > deps.config.CONSOLE_SESSION_TTL_SECONDS * 1000) {
        reply.redirect('/settings/login?timeout=1', 303);
        return null;
      }
      const frame = { csrf: csrf.token(request, reply), email: session.user.email };
      if (session.user.role !== 'admin') {
        refuse(reply, frame);
        return null;
      }
      if (request.method === 'POST' && !csrf.valid(request, (request.body ?? {}) as FormBody)) {
        send(
          reply,
          403,
          layout(
            'Form expired',
            '<p class="error" role="alert">The form expired or was not sent by this site. Nothing was changed.</p><p><a href="/settings">Back to the settings</a></p>',
          ),
        );
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
      setCookie(reply, SESSION_COOKIE, value, { secure, maxAgeSeconds }),
    token,
  };
}

export type ConsoleKit = ReturnType<typeof consoleKit>;

/** Sign-in, sign-out and the entry point of the console, and the pages' static files. */
export function consoleSessionRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  const loginForm = (request: FastifyRequest, reply: FastifyReply, status: number, extra = {}) =>
    kit.send(
      reply,
      status,
      loginPage({
        csrf: kit.csrf.token(request, reply),
        action: '/settings/login',
        intro: LOGIN_INTRO,
        ...extra,
      }),
    );

  pages.get('/settings', { config: { public: true } }, async (_request, reply) =>
    reply.redirect(CONSOLE_HOME, 302),
  );

  pages.get('/settings/login', { config: { public: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    if (query.timeout !== undefined)
      return loginForm(request, reply, 200, { error: 'Your console session timed out. Sign in again.' });
    if (query.out !== undefined) return loginForm(request, reply, 200, { intro: 'You are signed out.' });
    return loginForm(request, reply, 200);
  });

  pages.post('/settings/login', { config: { public: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as FormBody;
    if (!kit.csrf.valid(request, body))
      return loginForm(request, reply, 403, { error: 'The form expired; please sign in again.' });
    const email = param(body, 'email');
    const password = param(body, 'password');
    if (typeof email !== 'string' || typeof password !== 'string')
      return loginForm(request, reply, 400, { error: 'Enter your email and password.' });
    const result = await login(deps, { email, password, ...kit.meta(request) });
    if (!result.ok) {
      if (result.reason === 'throttled') reply.header('retry-after', String(result.retryAfterSeconds));
      const status = { throttled: 429, invalid: 401, inactive: 403 }[result.reason];
      return loginForm(request, reply, status, { email, error: result.message });
    }
    kit.setSession(reply, result.sessionToken, deps.config.OAUTH_SESSION_TTL_SECONDS);
    if (result.user.role !== 'admin')
      return kit.refuse(reply, { csrf: kit.csrf.token(request, reply), email: result.user.email });
    return reply.redirect(CONSOLE_HOME, 303);
  });

  pages.post('/settings/logout', { config: { public: true } }, async (request, reply) => {
    if (!kit.csrf.valid(request, (request.body ?? {}) as FormBody))
      return loginForm(request, reply, 403, { error: 'The sign-out form expired; nothing was changed.' });
    await logout(deps, kit.token(request), kit.meta(request));
    kit.setSession(reply, '', 0);
    return reply.redirect('/settings/login?out=1', 303);
  });

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
}
