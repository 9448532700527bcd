import { StringEnum } from './schema.js';
import { ROLES } from './vocabulary.js';

export const SCOPES = ['requests:read', 'requests:write', 'users:read', 'users:write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
export const ScopeSchema = StringEnum(SCOPES);

/** What each scope lets a client do, in the words the OpenAPI document and the consent page show. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'requests:read': 'Read requests, attachments and request events',
  'requests:write': 'Create and update requests, comments and attachments',
  'users:read': 'Read users, groups and members',
  'users:write': 'Manage agents, viewers, groups and membership (not administrators)',
  admin: 'Full access, including administrators, deleting requests and the audit log',
};

export { ROLES };
export type Role = (typeof ROLES)[number];
export const RoleSchema = StringEnum(ROLES);

/** What each role may ever do, whatever its credential says. */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  admin: SCOPES,
  agent: ['requests:read', 'requests:write', 'users:read'],
  viewer: ['requests:read', 'users:read'],
};

/** The `admin` scope implies every other scope. */
export function expandScopes(scopes: readonly string[]): Scope[] {
  const known = scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
  return known.includes('admin') ? [...SCOPES] : [...new Set(known)];
}

/** Credential scopes ∩ role scopes, after expanding `admin`. Ordered as SCOPES. */
export function effectiveScopes(credentialScopes: readonly string[], role: Role): Scope[] {
  const granted = new Set(expandScopes(credentialScopes));
  const allowed = new Set(expandScopes(ROLE_SCOPES[role]));
  return SCOPES.filter((s) => granted.has(s) && allowed.has(s));
}

export function hasScope(scopes: readonly string[], needed: Scope): boolean {
  return scopes.includes('admin') || scopes.includes(needed);
}
