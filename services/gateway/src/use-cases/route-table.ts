import { type OwningService, PUBLIC_ROUTES, type PublicRoute } from '@support-desk/contracts';

export type Upstreams = Record<OwningService, string>;

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

/** Uploads get the attachment limit (plus room for the multipart envelope); others the JSON limit. */
export const isUpload = (route: PublicRoute) =>
  route.method === 'POST' && route.path.endsWith('/attachments');

/** Multipart framing (boundaries, part headers, small fields) on top of the file itself. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
