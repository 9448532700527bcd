import { isAppError } from '@support-desk/platform/core';

const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644 §3.12 `scimType` values this service answers with. */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** A SCIM error: the status and `scimType` of RFC 7644 §3.12, rendered as a SCIM error body. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly scimType: ScimType | null,
    detail: string,
  ) {
    super(detail);
    this.name = 'ScimError';
  }
}

export const invalidValue = (detail: string) => new ScimError(400, 'invalidValue', detail);
export const scimNotFound = (what: string, id: string) => new ScimError(404, null, `${what} ${id} not found`);

/** The SCIM error body (`status` is a string, as RFC 7644 §3.12 shows it). */
export function scimErrorBody(err: ScimError) {
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    status: String(err.status),
    ...(err.scimType ? { scimType: err.scimType } : {}),
    detail: err.message,
  };
}

/**
 * The use cases' errors as SCIM errors: a taken email or name (409 CONFLICT) is `uniqueness`, a
 * refused value (400) `invalidValue`, not found stays 404; anything else is left to the caller.
 */
export function toScimError(err: unknown): ScimError | null {
  if (err instanceof ScimError) return err;
  if (!isAppError(err)) return null;
  switch (err.code) {
    case 'VALIDATION_ERROR':
      return invalidValue(err.message);
    case 'CONFLICT':
      return new ScimError(409, /already exists/.test(err.message) ? 'uniqueness' : null, err.message);
    case 'NOT_FOUND':
      return new ScimError(404, null, err.message);
    default:
      return new ScimError(err.statusCode, null, err.message);
  }
}
