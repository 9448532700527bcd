import { type OwningService, PUBLIC_ROUTES, type PublicRoute } from '@support-desk/contracts';

/** Each service's replicas (base URLs): one or more. */
export type Upstreams = Record<OwningService, string[]>;

/** The public routes each service owns; the gateway registers exactly these, unchanged paths. */
export function routesByService(
  routes: readonly PublicRoute[] = PUBLIC_ROUTES,
): Map<OwningService, PublicRoute[]> {
  const byService = new Map<OwningService, PublicRoute[]>();
  for (const route of routes) {
    const list = byService.get(route.service) ?? [];
    list.push(route);
    byService.set(route.service, list);
  }
  return byService;
}

/** `/v1/groups/:id/members/:userId` → `/v1/groups/{id}/members/{userId}` (OpenAPI style). */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);

/**
 * Uploads (the contract's streamed routes) get the attachment limit (plus room for the multipart
 * envelope) and are forwarded as they arrive; others the JSON limit, read whole first.
 */
export const isUpload = (route: PublicRoute) => route.stream === true;

/** Multipart framing (boundaries, part headers, small fields) on top of the file itself. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/**
 * Why a request path cannot be routed safely, or null. A backslash (raw or `%5C`), an encoded
 * slash (`%2F`), a `.` or `..` segment (raw or percent-encoded) and malformed percent-encoding
 * are read differently by different parsers (WHATWG URL turns `\` into `/` and resolves dot
 * segments; a router does neither), so the route the gateway authorises could differ from the
 * one a service serves. No route of the API needs any of them.
 */
export function ambiguousPath(path: string): string | null {
  if (/\\|%5c/i.test(path)) return 'a backslash';
  if (/%2f/i.test(path)) return 'an encoded slash';
  for (const segment of path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return 'malformed percent-encoding';
    }
    if (decoded === '.' || decoded === '..') return 'a dot segment';
  }
  return null;
}

/**
 * Whether a query string is well-formed percent-encoding. Parsers disagree on `%zz` (kept as
 * text by one, an error in another): a 400 at the door is the one clear answer.
 */
export function malformedQuery(query: string): boolean {
  if (!query.includes('%')) return false;
  try {
    decodeURIComponent(query.replace(/\+/g, ' '));
    return false;
  } catch {
    return true;
  }
}

/**
 * The path a call is forwarded to: the matched route's template with each parameter encoded,
 * never the path as the client spelt it, so the service serves the very route authorised.
 */
export function forwardedPath(route: PublicRoute, params: Record<string, string>): string {
  return route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}
