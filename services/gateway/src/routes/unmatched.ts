import { PUBLIC_ROUTES } from '@support-desk/contracts';
import { errorBody, type HttpApp } from '@support-desk/platform/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

/** What the gateway serves at one path template: its methods, and whether it is a /v1 route. */
interface PathEntry {
  methods: Set<string>;
  public: boolean;
}

const PROBE = 'GET';

/**
 * Every path the gateway serves, with the methods it serves there, collected from the routes as
 * they are registered (the public routes of PUBLIC_ROUTES with their HEAD twins, the OAuth
 * routes, the docs and health routes). Looked up with find-my-way, fastify's own router, so a
 * path matches here exactly when it would match there. Wildcard routes (SCIM's `/scim/v2/*`,
 * the CORS preflight `OPTIONS *`, the catch-all below) name no path and are left out: identity
 * answers SCIM's methods itself.
 */
function createPathTable() {
  const router = FindMyWay();
  // Every route under its own method: which one a call would reach (`reaches`).
  const routes = FindMyWay();
  const entries = new Map<string, PathEntry>();
  const add = (method: string, path: string, isPublic: boolean) => {
    let entry = entries.get(path);
    if (!entry) {
      entry = { methods: new Set(), public: false };
      entries.set(path, entry);
      router.on(PROBE, path, () => undefined, entry);
    }
    if (!entry.methods.has(method)) routes.on(method as HTTPMethod, path, () => undefined);
    entry.methods.add(method);
    entry.public ||= isPublic;
  };
  return {
    add,
    /** Each path without parameters, with the methods served there. */
    staticPaths: () => [...entries].filter(([path]) => !path.includes(':')),
    /** Whether a call would reach a route (one with parameters, where the path is static). */
    reaches: (method: string, path: string) => routes.find(method as HTTPMethod, path) !== null,
    /** The entry of the path (no query), or null; a parameter left empty matches nothing. */
    find(path: string): PathEntry | null {
      const found = router.find(PROBE, path);
      if (!found || Object.values(found.params).some((v) => !v)) return null;
      return found.store as PathEntry;
    },
  };
}

const isPublicPath = (path: string) => PUBLIC_ROUTES.some((r) => r.path === path);

/** Methods in a stable order: the usual ones first, as GitHub and Stripe list them. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const byOrder = (a: string, b: string) =>
  (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b);

/**
 * Must run before any route is registered: collects the table the answers below read.
 *
 * - A path the gateway serves, called with another method: `405 METHOD_NOT_ALLOWED` with
 *   `Allow` (plus `OPTIONS` where CORS is on), before authentication. The route table is public
 *   (the OpenAPI document lists it), so naming the methods tells a caller nothing new, and is
 *   more useful than GitHub's 404 to anonymous callers.
 * - Any other path: `404 NOT_FOUND`; outside `/v1` the message points at the prefix, naming
 *   the route meant when `/v1` + the path is one (`GET /requests` → `/v1/requests`).
 */
export function collectServedPaths(app: HttpApp) {
  const table = createPathTable();
  let refusing = false;
  app.addHook('onRoute', (route) => {
    // The 405 routes below serve nothing: they stay out of the table (and of `Allow`).
    if (refusing || route.url.includes('*')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) table.add(method, route.url, isPublicPath(route.url));
  });
  return {
    /**
     * Registers the catch-all answering 405 and 404; call once every other route is registered.
     * `corsPath` (CORS on): the paths where preflights are granted.
     */
    registerUnmatched({ corsPath }: { corsPath: ((path: string) => boolean) | null }) {
      // QUERY (an IETF draft; Node parses it) is not among fastify's methods: added, it gets the
      // same 405 as every other method a path does not serve, instead of a 404 from the router.
      if (!app.supportedMethods.includes('QUERY')) app.addHttpMethod('QUERY');
      // With CORS on, @fastify/cors answers every OPTIONS (preflights) itself.
      const methods = app.supportedMethods.filter((m) => !(corsPath && m === 'OPTIONS'));
      const answer = async (request: FastifyRequest, reply: FastifyReply) => {
        const path = request.url.split('?')[0];
        const served = table.find(path);
        if (served) {
          const allowed = [...served.methods, ...(corsPath?.(path) ? ['OPTIONS'] : [])];
          const allow = [...new Set(allowed)].sort(byOrder).join(', ');
          return reply
            .code(405)
            .header('allow', allow)
            .send(
              errorBody(
                'METHOD_NOT_ALLOWED',
                `Method ${request.method} is not allowed on ${path}; allowed: ${allow}`,
              ),
            );
        }
        return reply.code(404).send(errorBody('NOT_FOUND', notFoundMessage(request.method, path, table)));
      };
      // Answered before the body is read: a method the path does not serve is 405 whatever its
      // body (not 415 for a type no route takes, nor 413), and the body is never parsed.
      const refusal = { exposeHeadRoute: false, onRequest: answer, handler: answer };
      refusing = true;
      app.route({ method: methods, url: '/*', ...refusal });
      // A static path can also match a route with a parameter under another method
      // (`PATCH /v1/requests/changes` would be `PATCH /v1/requests/:id`, id `changes`, a 404):
      // the path is served, so the method it does not serve there is 405 too.
      for (const [path, served] of table.staticPaths()) {
        const others = methods.filter((m) => !served.methods.has(m) && table.reaches(m, path));
        if (others.length > 0) app.route({ method: others, url: path, ...refusal });
      }
      refusing = false;
    },
  };
}

function notFoundMessage(method: string, path: string, table: ReturnType<typeof createPathTable>): string {
  const base = `Route ${method} ${path} not found`;
  if (path === '/v1' || path.startsWith('/v1/')) return base;
  const prefixed = `/v1${path === '/' ? '' : path}`;
  if (table.find(prefixed)?.public) return `${base}; the API lives under /v1 (did you mean ${prefixed}?)`;
  return `${base}; the API lives under /v1 (every route is listed at /openapi.json)`;
}
