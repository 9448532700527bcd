import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import {
  AuthorizePageError,
  AuthorizeRedirectError,
  type AuthorizeRequest,
  grantableScopes,
  issueCode,
  redirectWith,
  validateAuthorize,
} from '../../use-cases/authorize.js';
import type { Deps } from '../../use-cases/deps.js';
import { login, logout, sessionUser } from '../../use-cases/login.js';
import type { UserDoc } from '../../store/index.js';
import type { BrowserForms } from '../session.js';
import { type FormBody, param } from '../forms.js';
import { PAGE_HEADERS, renderDocument } from '../pages/layout.js';
import { consentPage, errorPage, loginPage, messagePage } from '../pages/oauth.js';

/**
 * The browser side of the authorization server: authorize (login → consent → redirect),
 * the login form, and logout. Served without a principal; every form post is CSRF-checked
 * before its handler (see web/session.ts), with the page each route names for a refusal.
 */
export function oauthPageRoutes(app: FastifyInstance, deps: Deps, forms: BrowserForms): void {
  const html = (reply: FastifyReply, status: number, page: VNode) =>
    reply.code(status).headers(PAGE_HEADERS).send(renderDocument(page));
  const csrfToken = (request: FastifyRequest, reply: FastifyReply) => forms.token(request, reply);
  const meta = (request: FastifyRequest) => ({
    ip: request.clientAddress ?? 'unknown',
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
    requestId: request.id,
  });

  /** 302 answering a GET; 303 answering a POST, so the browser does not repost the form there. */
  const redirectError = (reply: FastifyReply, err: AuthorizeRedirectError) =>
    reply.header('cache-control', 'no-store').redirect(
      redirectWith(err.redirectUri, {
        error: err.error,
        error_description: err.description,
        state: err.state,
        iss: deps.config.OAUTH_ISSUER,
      }),
      reply.request.method === 'POST' ? 303 : 302,
    );

  /** Validates the request; on a page error renders it, on a redirect error redirects. */
  const validated = async (reply: FastifyReply, query: string): Promise<AuthorizeRequest | null> => {
    try {
      return await validateAuthorize(deps, query);
    } catch (err) {
      if (err instanceof AuthorizePageError) {
        html(reply, 400, errorPage(err.message));
        return null;
      }
      if (err instanceof AuthorizeRedirectError) {
        redirectError(reply, err);
        return null;
      }
      throw err;
    }
  };

  const showConsent = (
    request: FastifyRequest,
    reply: FastifyReply,
    req: AuthorizeRequest,
    user: UserDoc,
    query: string,
  ) => {
    const scopes = grantableScopes(req.scopes, user);
    if (scopes.length === 0) {
      return redirectError(
        reply,
        new AuthorizeRedirectError(
          req.redirectUri,
          'invalid_scope',
          'your role cannot grant any of the requested scopes',
          req.state,
        ),
      );
    }
    return html(
      reply,
      200,
      consentPage({
        csrf: csrfToken(request, reply),
        request: query,
        clientName: req.client.name,
        userEmail: user.email,
        scopes,
      }),
    );
  };

  const requestOf = (body: FormBody) => {
    const query = param(body, 'request');
    return typeof query === 'string' ? query : '';
  };
  const refusal = (message: string) => ({
    public: true,
    csrfRefused: (_request: FastifyRequest, reply: FastifyReply) => html(reply, 403, errorPage(message)),
  });

  app.register(async (pages) => {
    pages.get('/oauth/authorize', { config: { public: true } }, async (request, reply) => {
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      const req = await validated(reply, query);
      if (!req) return reply;
      const user = await sessionUser(deps, forms.session(request));
      if (!user) return html(reply, 200, loginPage({ csrf: csrfToken(request, reply), request: query }));
      return showConsent(request, reply, req, user, query);
    });

    const loginExpired = (request: FastifyRequest, reply: FastifyReply) =>
      html(
        reply,
        403,
        loginPage({
          csrf: csrfToken(request, reply),
          request: requestOf((request.body ?? {}) as FormBody),
          error: 'Your session expired; please sign in again.',
        }),
      );
    pages.post(
      '/oauth/login',
      { config: { public: true, csrfRefused: loginExpired } },
      async (request, reply) => {
        const body = (request.body ?? {}) as FormBody;
        const query = requestOf(body);
        const email = param(body, 'email');
        const password = param(body, 'password');
        const csrf = csrfToken(request, reply);
        if (typeof email !== 'string' || typeof password !== 'string') {
          return html(
            reply,
            400,
            loginPage({ csrf, request: query, error: 'Enter your email and password.' }),
          );
        }
        const result = await login(deps, { email, password, ...meta(request) });
        if (!result.ok) {
          if (result.reason === 'throttled') reply.header('retry-after', String(result.retryAfterSeconds));
          const status = { throttled: 429, invalid: 401, inactive: 403 }[result.reason];
          return html(reply, status, loginPage({ csrf, request: query, email, error: result.message }));
        }
        forms.setSession(reply, result.sessionToken, deps.config.OAUTH_SESSION_TTL_SECONDS);
        if (!query)
          return html(reply, 200, messagePage('Signed in', `You are signed in as ${result.user.email}.`));
        // Re-encoded: the hidden field is client input and must not shape the Location header.
        return reply.redirect(`/oauth/authorize?${new URLSearchParams(query).toString()}`, 303);
      },
    );

    const consentRefused = refusal('The form expired or was not sent by this site. Start again.');
    pages.post('/oauth/authorize', { config: consentRefused }, async (request, reply) => {
      const body = (request.body ?? {}) as FormBody;
      const query = requestOf(body);
      const req = await validated(reply, query);
      if (!req) return reply;
      const user = await sessionUser(deps, forms.session(request));
      if (!user) return html(reply, 200, loginPage({ csrf: csrfToken(request, reply), request: query }));
      const decision = param(body, 'decision');
      if (decision !== 'approve') {
        return redirectError(
          reply,
          new AuthorizeRedirectError(
            req.redirectUri,
            'access_denied',
            'the user denied the request',
            req.state,
          ),
        );
      }
      const scopes = grantableScopes(req.scopes, user);
      if (scopes.length === 0) return showConsent(request, reply, req, user, query);
      const code = await issueCode(deps, req, user, scopes);
      return reply
        .header('cache-control', 'no-store')
        .redirect(
          redirectWith(req.redirectUri, { code, state: req.state, iss: deps.config.OAUTH_ISSUER }),
          303,
        );
    });

    const logoutRefused = refusal('The sign-out form expired; nothing was changed.');
    pages.post('/oauth/logout', { config: logoutRefused }, async (request, reply) => {
      await logout(deps, forms.session(request), meta(request));
      forms.setSession(reply, '', 0);
      return html(reply, 200, messagePage('Signed out', 'You are signed out.'));
    });
  });
}
