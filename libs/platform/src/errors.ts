import { ERROR_STATUS, type ErrorCode, type ErrorDetail } from '@support-desk/contracts';

/** A failure the client caused or may act on; rendered as the error envelope with its status. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  /** Every problem of the input, for `error.details` (validation errors). */
  readonly details: ErrorDetail[] | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    headers: Record<string, string> = {},
    details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.statusCode = ERROR_STATUS[code];
    // Every 503 says when to come back (the contract's promise), whatever refused the call.
    this.headers =
      this.statusCode === 503 && !headers['retry-after'] ? { ...headers, 'retry-after': '1' } : headers;
    this.details = details;
  }
}

export const validationError = (field: string, message: string) =>
  new AppError('VALIDATION_ERROR', `${field}: ${message}`, {}, [{ field, message }]);
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const forbidden = (message = 'Insufficient permissions') => new AppError('FORBIDDEN', message);
export const unauthorized = (message = 'Missing or invalid credentials') =>
  new AppError('UNAUTHORIZED', message);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
