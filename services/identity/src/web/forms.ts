import type { FastifyInstance } from 'fastify';
import { type FormBody, parseForm } from '../oauth/forms.js';

export { type FormBody, param } from '../oauth/forms.js';

/**
 * A cookie's name: under https the `__Host-` prefix, which browsers accept only from a secure
 * origin, with `Secure`, `Path=/` and no `Domain` (so no sibling subdomain can set or shadow it).
 */
export const cookieName = (base: string, secure: boolean) => (secure ? `__Host-${base}` : base);

/** Parses HTML form posts (bounded) in the plugin scope of a set of pages. */
export function acceptForms(scope: FastifyInstance, bodyLimit = 16 * 1024): void {
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit },
    (_req, raw, done) => done(null, parseForm(String(raw))),
  );
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

/** One value of a page's query string, if it was sent once. */
export const query = (q: unknown, name: string) => {
  const v = (q as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
};
