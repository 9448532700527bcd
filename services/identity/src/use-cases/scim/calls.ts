import type { EventContext } from '@support-desk/platform/core';
import type { IdentityProviderDoc } from '../../store/index.js';
import { invalidValue } from './errors.js';
import type { Location } from './resources.js';

/** One authenticated SCIM call: the connection it is for, its event context, and where it is served. */
export interface ScimCall {
  connection: IdentityProviderDoc;
  ctx: EventContext;
  at: Location;
}

export const SCIM_PREFIX = '/scim/v2';

/**
 * Where identity providers reach SCIM: the gateway's public origin (`OAUTH_ISSUER`, which is the
 * gateway's public URL) and the prefix. Resource locations and `deskctl idp create` both say it.
 */
export const scimBaseUrl = (config: { OAUTH_ISSUER: string }) =>
  `${config.OAUTH_ISSUER.replace(/\/+$/, '')}${SCIM_PREFIX}`;

const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/** Page size: 100 by default, at most 200 (`filter.maxResults` in ServiceProviderConfig). */
const DEFAULT_COUNT = 100;
export const MAX_COUNT = 200;

export interface ListParams {
  filter?: string;
  startIndex?: string;
  count?: string;
  attributes?: string;
  excludedAttributes?: string;
}

/** RFC 7644 §3.4.2.4: startIndex < 1 is 1; count < 0 is 0; both integers. */
export function pageOf(params: ListParams): { startIndex: number; count: number } {
  const int = (v: string | undefined, name: string, def: number) => {
    if (v === undefined || v === '') return def;
    if (!/^-?\d{1,9}$/.test(v)) throw invalidValue(`${name} must be an integer`);
    return Number(v);
  };
  return {
    startIndex: Math.max(1, int(params.startIndex, 'startIndex', 1)),
    count: Math.min(MAX_COUNT, Math.max(0, int(params.count, 'count', DEFAULT_COUNT))),
  };
}

export function listResponse(resources: object[], total: number, startIndex: number) {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: total,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

const names = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

const ALWAYS = new Set(['id', 'schemas', 'meta']);

/**
 * `attributes` / `excludedAttributes` (RFC 7644 §3.9) on top-level attributes (an extension's URN
 * counts as one; `name.givenName` selects its whole parent): `id`, `schemas`, `meta` always stay.
 */
export function project(resource: Record<string, unknown>, params: ListParams) {
  const only = names(params.attributes).map((n) => n.split('.')[0]);
  const without = new Set(names(params.excludedAttributes));
  return Object.fromEntries(
    Object.entries(resource).filter(([key]) => {
      const k = key.toLowerCase();
      if (ALWAYS.has(k)) return true;
      if (only.length > 0) return only.includes(k);
      return !without.has(k);
    }),
  );
}
