import { hasScope } from '@support-desk/contracts';
import { forbidden } from '@support-desk/platform/core';

/**
 * Who may make, unmake, change or deactivate an administrator (issue 30). `users:write` manages
 * agents and viewers; anything that touches an admin (creating one, a role to or from `admin`,
 * any change to an admin, their deactivation, their group memberships) needs the `admin` scope,
 * so a `users:write` credential (an HR-sync app, a scoped API key) can never turn itself or anyone
 * into an administrator, nor lock the administrators out.
 *
 * `scopes` are the caller's effective scopes on /v1; undefined for callers that are
 * administrators by construction (deskctl, the settings console) or follow an administrator's
 * rules (an identity provider connection's role rules).
 */
export interface CallerScopes {
  scopes?: readonly string[];
}

export function assertMayManageAdmins({ scopes }: CallerScopes, what: string): void {
  if (scopes === undefined || hasScope(scopes, 'admin')) return;
  throw forbidden(`${what} needs the admin scope (users:write manages agents and viewers only)`);
}
