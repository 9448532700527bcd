/**
 * The application/x-www-form-urlencoded bodies of OAuth (RFC 6749): parsed here for the token
 * endpoint and, through web/forms.ts, for the browser pages' forms.
 */

/** A parsed application/x-www-form-urlencoded body; repeated names are kept to be refused. */
export type FormBody = Record<string, string | string[]>;

export function parseForm(raw: string): FormBody {
  // Without a prototype: a field named `__proto__` or `constructor` is a field like any other.
  const out: FormBody = Object.create(null) as FormBody;
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
