import type { Scope } from './scopes.js';

type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type OwningService = 'requests' | 'identity' | 'audit' | 'webhooks';
type RateBucket = 'general' | 'events';

export interface PublicRoute {
  method: HttpMethod;
  /** Fastify-style path; services serve exactly this path (the gateway does not rewrite). */
  path: string;
  /** Scope the caller's effective scopes must include; `authenticated` = any valid credential. */
  scope: Scope | 'authenticated';
  bucket: RateBucket;
  service: OwningService;
  summary: string;
  /**
   * The body is a stream (an upload): the gateway forwards it while it arrives, never buffered,
   * and its principal assertion binds it with a one-time id rather than a digest of its bytes.
   */
  stream?: true;
  /**
   * `items`: the call counts against the rate bucket once per element of its body's `items` (a
   * bulk job: what the same changes one by one would have cost), all or nothing.
   */
  cost?: 'items';
}

const r = (
  method: HttpMethod,
  path: string,
  scope: PublicRoute['scope'],
  service: OwningService,
  summary: string,
  bucket: RateBucket = 'general',
): PublicRoute => ({ method, path, scope, bucket, service, summary });

/**
 * Every public `/v1` route: the gateway proxies only these (anything else is 404), checks the
 * scope, counts the bucket; the OpenAPI document lists exactly these.
 */
export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  r('GET', '/v1/requests', 'requests:read', 'requests', 'List support requests'),
  r('POST', '/v1/requests', 'requests:write', 'requests', 'Create a support request'),
  r('GET', '/v1/requests/changes', 'requests:read', 'requests', 'Changes feed of support requests'),
  r('GET', '/v1/requests/deleted', 'admin', 'requests', 'List deleted requests in the trash (admin)'),
  {
    ...r('POST', '/v1/requests/bulk', 'requests:write', 'requests', 'Change many requests in one job'),
    cost: 'items',
  },
  r('GET', '/v1/jobs/:id', 'requests:read', 'requests', 'Progress and per-item results of a bulk job'),
  r('GET', '/v1/requests/:id', 'requests:read', 'requests', 'Read one support request'),
  r('PATCH', '/v1/requests/:id', 'requests:write', 'requests', 'Update a support request'),
  r('DELETE', '/v1/requests/:id', 'admin', 'requests', 'Delete a support request (admin)'),
  r('POST', '/v1/requests/:id/restore', 'admin', 'requests', 'Restore a deleted request (admin)'),
  r('GET', '/v1/requests/:id/comments', 'requests:read', 'requests', 'List the comments of a request'),
  r('POST', '/v1/requests/:id/comments', 'requests:write', 'requests', 'Add a comment'),
  {
    ...r('POST', '/v1/requests/:id/attachments', 'requests:write', 'requests', 'Upload an attachment'),
    stream: true,
  },
  r('GET', '/v1/attachments/:id', 'requests:read', 'requests', 'Download an attachment'),
  r('GET', '/v1/sla-policies', 'requests:read', 'requests', 'List SLA policies'),
  r('POST', '/v1/sla-policies', 'admin', 'requests', 'Create an SLA policy (admin)'),
  r('GET', '/v1/sla-policies/:id', 'requests:read', 'requests', 'Read one SLA policy'),
  r('PATCH', '/v1/sla-policies/:id', 'admin', 'requests', 'Update an SLA policy (admin)'),
  r('DELETE', '/v1/sla-policies/:id', 'admin', 'requests', 'Delete an SLA policy (admin)'),
  r('GET', '/v1/requests/:id/events', 'requests:read', 'audit', 'Events of one request', 'events'),
  r('GET', '/v1/users', 'users:read', 'identity', 'List users'),
  r('POST', '/v1/users', 'users:write', 'identity', 'Create a user'),
  r('GET', '/v1/users/:id', 'users:read', 'identity', 'Read one user'),
  r('PATCH', '/v1/users/:id', 'users:write', 'identity', 'Update a user'),
  r('DELETE', '/v1/users/:id', 'users:write', 'identity', 'Deactivate a user'),
  r('GET', '/v1/me', 'authenticated', 'identity', "The caller's profile and scopes"),
  r('GET', '/v1/groups', 'users:read', 'identity', 'List groups'),
  r('POST', '/v1/groups', 'users:write', 'identity', 'Create a group'),
  r('GET', '/v1/groups/:id', 'users:read', 'identity', 'Read one group'),
  r('PATCH', '/v1/groups/:id', 'users:write', 'identity', 'Update a group'),
  r('DELETE', '/v1/groups/:id', 'users:write', 'identity', 'Delete a group'),
  r('GET', '/v1/groups/:id/members', 'users:read', 'identity', 'List group members'),
  r('POST', '/v1/groups/:id/members', 'users:write', 'identity', 'Add a member'),
  r('DELETE', '/v1/groups/:id/members/:userId', 'users:write', 'identity', 'Remove a member'),
  r('GET', '/v1/events', 'admin', 'audit', 'List audit events', 'events'),
  r('GET', '/v1/events/export', 'admin', 'audit', 'Export the audit log as NDJSON', 'events'),
  r('GET', '/v1/events/:id', 'admin', 'audit', 'Read one audit event', 'events'),
  r('GET', '/v1/webhooks', 'admin', 'webhooks', 'List webhook subscriptions'),
  r('POST', '/v1/webhooks', 'admin', 'webhooks', 'Create a webhook subscription'),
  r('GET', '/v1/webhooks/:id', 'admin', 'webhooks', 'Read one webhook subscription'),
  r('PATCH', '/v1/webhooks/:id', 'admin', 'webhooks', 'Update a webhook subscription'),
  r('DELETE', '/v1/webhooks/:id', 'admin', 'webhooks', 'Delete a webhook subscription'),
  r('POST', '/v1/webhooks/:id/rotate-secret', 'admin', 'webhooks', "Rotate a subscription's signing secret"),
  r('POST', '/v1/webhooks/:id/ping', 'admin', 'webhooks', 'Send a test delivery'),
  r('GET', '/v1/webhooks/:id/deliveries', 'admin', 'webhooks', "A subscription's delivery log"),
  r('POST', '/v1/webhooks/:id/deliveries/:deliveryId/replay', 'admin', 'webhooks', 'Deliver one event again'),
];

/**
 * Resources whose single read carries an ETag (304 on If-None-Match) and whose PATCH and DELETE
 * take If-Match (412 when the resource changed): see `entity-tags.ts` in the platform.
 */
export const ENTITY_TAGGED_PATHS: readonly string[] = ['/v1/requests/:id', '/v1/users/:id', '/v1/groups/:id'];

/** One route of the authorization server, forwarded by the gateway to identity without a credential. */
export interface OAuthRoute {
  method: 'GET' | 'POST';
  /** Served by identity at exactly this path; the gateway forwards no other. */
  path: string;
  /**
   * Client-authenticated (token, revocation): each call identity reports as made by an
   * authenticated confidential client counts against that client's budget.
   */
  clientAuthenticated: boolean;
}

const o = (method: OAuthRoute['method'], path: string, clientAuthenticated = false): OAuthRoute => ({
  method,
  path,
  clientAuthenticated,
});

/** The authorization server's public surface: pages, token endpoints and metadata. */
export const OAUTH_ROUTES: readonly OAuthRoute[] = [
  o('GET', '/oauth/authorize'),
  o('POST', '/oauth/authorize'),
  o('POST', '/oauth/login'),
  o('POST', '/oauth/logout'),
  o('POST', '/oauth/token', true),
  o('POST', '/oauth/revoke', true),
  o('GET', '/.well-known/oauth-authorization-server'),
  o('GET', '/.well-known/jwks.json'),
];

/**
 * The settings console (server-rendered pages served by identity, issue 19) and the static files
 * its pages and the login/consent pages load. Forwarded like the authorization server's pages:
 * without an API credential, each path exactly, POSTs counted per client address.
 */
export const CONSOLE_ROUTES: readonly OAuthRoute[] = [
  o('GET', '/settings'),
  o('GET', '/settings/login'),
  o('POST', '/settings/login'),
  o('POST', '/settings/logout'),
  o('GET', '/settings/api-keys'),
  o('POST', '/settings/api-keys'),
  o('GET', '/settings/api-keys/revoke'),
  o('POST', '/settings/api-keys/revoke'),
  o('GET', '/settings/ip-allowlist'),
  o('POST', '/settings/ip-allowlist'),
  o('GET', '/settings/oauth-clients'),
  o('POST', '/settings/oauth-clients'),
  o('GET', '/settings/oauth-clients/revoke'),
  o('POST', '/settings/oauth-clients/revoke'),
  o('GET', '/settings/webhooks'),
  o('POST', '/settings/webhooks'),
  o('GET', '/settings/webhooks/edit'),
  o('POST', '/settings/webhooks/edit'),
  o('POST', '/settings/webhooks/rotate-secret'),
  o('POST', '/settings/webhooks/ping'),
  o('POST', '/settings/webhooks/replay'),
  o('GET', '/settings/webhooks/delete'),
  o('POST', '/settings/webhooks/delete'),
  o('GET', '/settings/sla-policies'),
  o('POST', '/settings/sla-policies'),
  o('GET', '/settings/sla-policies/delete'),
  o('POST', '/settings/sla-policies/delete'),
  o('GET', '/settings/trash'),
  o('POST', '/settings/trash/restore'),
  o('GET', '/settings/users'),
  o('GET', '/settings/users/link'),
  o('POST', '/settings/users/link'),
  o('GET', '/assets/desk.css'),
  o('GET', '/assets/console.js'),
  o('GET', '/assets/favicon.svg'),
];

/** Schemas of one public route, keyed `"<METHOD> <path>"` in a RouteSchemaMap. */
export interface RouteSchemas {
  description?: string;
  params?: import('typebox').TSchema;
  querystring?: import('typebox').TSchema;
  body?: import('typebox').TSchema;
  /** Content types accepted for the body when not JSON (e.g. multipart/form-data). */
  consumes?: string[];
  /** Success responses by status; errors are the common ErrorEnvelope. */
  response: Record<number, import('typebox').TSchema>;
  /** Non-JSON success body (e.g. a file download). */
  produces?: string[];
  /**
   * The path of the resource a 201 creates, with `:id` standing for the answer's `data.id` (a
   * public GET route): `contractRoute` sends it as `Location` (the gateway makes it absolute),
   * and the OpenAPI document lists the header.
   */
  location?: string;
}

export type RouteSchemaMap = Record<string, RouteSchemas>;

export const routeKey = (route: Pick<PublicRoute, 'method' | 'path'>) => `${route.method} ${route.path}`;
