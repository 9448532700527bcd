import { type SchemaOptions, type TUnsafe, Type } from '@sinclair/typebox';

/**
 * A string restricted to a fixed set, as a plain JSON-Schema `enum` so validation errors read
 * "must be equal to one of the allowed values" and OpenAPI shows the list.
 */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] }) as TUnsafe<T[number]>;

/** ISO 8601 date-time query or body value. */
export const DateTimeString = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });
