import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { StringEnum } from './schema.js';

/** Every error code the public API can answer with, and the HTTP status it travels with. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

const ErrorCodeSchema = StringEnum(ERROR_CODES);

const ErrorBody = Type.Object(
  {
    code: ErrorCodeSchema,
    message: Type.String(),
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
