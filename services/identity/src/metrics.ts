import { counter } from '@support-desk/platform/metrics';

/** The identity service's own metrics (the platform adds HTTP, outbox and process ones). */
export const logins = counter(
  'identity_logins_total',
  'Sign-ins at the login page by outcome (ok, invalid, inactive, throttled)',
  ['outcome'],
);

export const tokensIssued = counter(
  'identity_tokens_issued_total',
  'Access tokens issued at /oauth/token by grant type (authorization_code, refresh_token)',
  ['grant_type'],
);

export const tokenReuseDetected = counter(
  'identity_token_reuse_detected_total',
  'A used authorization code or rotated refresh token presented again: the grant is revoked',
  ['kind'],
);

export const apiKeysResolved = counter(
  'identity_api_keys_resolved_total',
  'API keys resolved for the gateway by outcome (valid or the refusal reason)',
  ['outcome'],
);

export const ldapSyncs = counter(
  'identity_ldap_syncs_total',
  'LDAP directory syncs by trigger (schedule, cli) and outcome (succeeded, partial, stopped, failed, interrupted)',
  ['trigger', 'outcome'],
);

export const scimRequests = counter(
  'identity_scim_requests_total',
  'SCIM calls by resource (users, groups, other) and outcome (ok, unauthorized, refused: another 4xx, error: 5xx)',
  ['resource', 'outcome'],
);

export const signingKeyErrors = counter(
  'identity_signing_key_errors_total',
  'Access-token signing keys that could not be loaded, by use (sign: issuing a token, publish: the JWKS)',
  ['use'],
);

// Every alerting series starts at 0, so the first failure after a start counts as an increase.
for (const trigger of ['schedule', 'cli'])
  for (const outcome of ['succeeded', 'partial', 'stopped', 'failed', 'interrupted'])
    ldapSyncs.inc({ trigger, outcome }, 0);
for (const resource of ['users', 'groups', 'other'])
  for (const outcome of ['ok', 'unauthorized', 'refused', 'error'])
    scimRequests.inc({ resource, outcome }, 0);
for (const use of ['sign', 'publish']) signingKeyErrors.inc({ use }, 0);
for (const kind of ['authorization_code', 'refresh_token']) tokenReuseDetected.inc({ kind }, 0);
