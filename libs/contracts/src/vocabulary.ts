// The contract's closed vocabularies as plain values, with nothing else: what a command table
// offers as choices (deskctl's `--role`, `--plan`, `--status`) without loading TypeBox and every
// schema (`@support-desk/contracts/vocabulary`). The schemas built from them live beside their
// shapes and re-export them from the main entry.

export const ROLES = ['admin', 'agent', 'viewer'] as const;
export const USER_STATUSES = ['active', 'inactive'] as const;
export const PLANS = ['standard', 'professional', 'enterprise'] as const;
