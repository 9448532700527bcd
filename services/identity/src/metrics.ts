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
