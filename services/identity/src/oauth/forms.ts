import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomSecret, safeEqual } from '../use-cases/secrets.js';

/** A parsed application/x-www-form-urlencoded body; repeated names are kept to be refused. */
export type FormBody = Record<string, string | string[]>;

export function parseForm(raw: string): FormBody {
  const out: FormBody = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** The single value of a parameter; `repeated` when it was sent more than once (RFC 6749 §3.1). */
export function param(body: unknown, name: string): string | undefined | { repeated: true } {
  const v = (body as Record<string, unknown> | null | undefined)?.[name];
  if (Array.isArray(v)) return { repeated: true };
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    if (!name || name in out) continue;
    try {
      out[name] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      // ignore undecodable cookies
    }
  }
  return out;
}

export interface CookieOptions {
  secure: boolean;
  maxAgeSeconds?: number;
}

/**
 * A cookie's name: under https the `__Host-` prefix, which browsers accept only from a secure
 * origin, with `Secure`, `Path=/` and no `Domain` (so no sibling subdomain can set or shadow it).
 */
export const cookieName = (base: string, secure: boolean) => (secure ? `__Host-${base}` : base);

/**
 * HttpOnly, SameSite=Lax, Path=/ (the login pages under /oauth and the settings console under
 * /settings share the session); under https also `__Host-` prefixed and Secure.
 */
export function setCookie(reply: FastifyReply, name: string, value: string, opts: CookieOptions): void {
  const parts = [
    `${cookieName(name, opts.secure)}=${encodeURIComponent(value)}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (opts.secure) parts.push('Secure');
  if (opts.maxAgeSeconds !== undefined) parts.push(`Max-Age=${opts.maxAgeSeconds}`);
  const existing = reply.getHeader('set-cookie');
  const list = Array.isArray(existing) ? existing : existing ? [String(existing)] : [];
  reply.header('set-cookie', [...list, parts.join('; ')]);
}

export const cookie = (request: FastifyRequest, name: string) => parseCookies(request.headers.cookie)[name];

/** Parses HTML form posts (bounded) in the plugin scope of a set of pages. */
export function acceptForms(scope: FastifyInstance, bodyLimit = 16 * 1024): void {
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit },
    (_req, raw, done) => done(null, parseForm(String(raw))),
  );
}

const CSRF_COOKIE = 'sd_csrf';

/**
 * Double-submit CSRF protection of identity's forms: a random token in an HttpOnly SameSite=Lax
 * cookie, repeated in each form's hidden `csrf_token` field; a post counts only when both match.
 */
export function csrfProtection(secure: boolean) {
  const name = cookieName(CSRF_COOKIE, secure);
  return {
    /** The visitor's token (set as a cookie the first time), for the page's forms. */
    token(request: FastifyRequest, reply: FastifyReply): string {
      const existing = cookie(request, name);
      if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
      const token = randomSecret(32);
      setCookie(reply, CSRF_COOKIE, token, { secure });
      return token;
    },
    valid(request: FastifyRequest, body: FormBody): boolean {
      const sent = param(body, 'csrf_token');
      const expected = cookie(request, name);
      return typeof sent === 'string' && !!expected && safeEqual(sent, expected);
    },
  };
}
