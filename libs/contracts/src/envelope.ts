import { type Static, type TSchema, Type } from 'typebox';
import { StringEnum } from './schema.js';

/** Every error code the public API can answer with, and the HTTP status it travels with. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  EXPECTATION_FAILED: 417,
  IDEMPOTENCY_KEY_REUSED: 422,
  HEADERS_TOO_LARGE: 431,
  RATE_LIMITED: 429,
  SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

const ErrorCodeSchema = StringEnum(ERROR_CODES);

/** One problem of the input: where it is (`body.title`, `query.limit`, `path.id`) and what would be valid. */
export const ErrorDetail = Type.Object(
  {
    field: Type.String({
      description: 'Where the problem is: `body.<field>`, `query.<name>`, `path.<name>` or `header.<name>`',
    }),
    message: Type.String({ description: 'What is wrong and what would be valid' }),
  },
  { additionalProperties: false },
);
export type ErrorDetail = Static<typeof ErrorDetail>;

/** The `error` of an error envelope (also a bulk job's failed item). */
export const ErrorBody = Type.Object(
  {
    code: ErrorCodeSchema,
    message: Type.String(),
    details: Type.Optional(
      Type.Array(ErrorDetail, {
        description: 'Every problem found in the input (validation errors), not only the first',
      }),
    ),
    requestId: Type.Optional(
      Type.String({
        description: 'The id of this call, as in the `X-Request-Id` header: quote it when asking for help',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: ErrorBody,
  },
  { $id: 'ErrorEnvelope', additionalProperties: false },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** `{ success: true, data }` around a payload schema. */
export const Ok = <T extends TSchema>(data: T) =>
  Type.Object({ success: Type.Literal(true), data }, { additionalProperties: false });
