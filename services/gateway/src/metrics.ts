import { counter } from '@support-desk/platform/metrics';

/**
 * The gateway's own metrics (the platform adds HTTP, process and runtime ones). Every label is a
 * fixed word: credential kinds, refusal reasons, bucket and plan names, service names.
 */
export const authentications = counter(
  'gateway_authentications_total',
  'Authentications of /v1 calls by credential type (api_key, oauth, none) and outcome (ok or the refusal reason)',
  ['credential', 'outcome'],
);

export const rateLimitDecisions = counter(
  'gateway_rate_limit_decisions_total',
  'Rate-limit decisions by bucket and plan: admitted, limited, or limiter_error_fail_open / limiter_error_fail_closed',
  ['bucket', 'plan', 'decision'],
);

export const upstreamErrors = counter(
  'gateway_upstream_errors_total',
  'Calls to an upstream service that failed without an answer, by service and kind (timeout, unreachable, reset)',
  ['service', 'kind'],
);

export const upstreamAnswers = counter(
  'gateway_upstream_answers_total',
  'Answers an upstream service gave to calls the gateway proxied, by service and status code',
  ['service', 'http_response_status_code'],
);

export const cacheLookups = counter(
  'gateway_cache_lookups_total',
  'Look-ups in the credential caches (api_keys, tokens, users, oauth_clients, deny_list) by result (hit, miss)',
  ['cache', 'result'],
);

export const staleAnswers = counter(
  'gateway_identity_stale_answers_total',
  'Look-ups answered from an expired cache entry because identity did not answer (CREDENTIAL_STALE_IF_ERROR_MS), by cache',
  ['cache'],
);

export const jwksRefreshes = counter(
  'gateway_jwks_refreshes_total',
  "Fetches of identity's JWKS by outcome (ok, error)",
  ['outcome'],
);

export const idempotencyOutcomes = counter(
  'gateway_idempotency_keys_total',
  'Calls with an Idempotency-Key by outcome (claimed, replayed, in_progress, reused, invalid, unavailable)',
  ['outcome'],
);

// At 0 from the start, so the first failed fetch after a start counts as an increase.
for (const outcome of ['ok', 'error']) jwksRefreshes.inc({ outcome }, 0);
