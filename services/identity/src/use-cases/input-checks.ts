import { CreateUserBody } from '@support-desk/contracts';
import { firstSchemaProblem } from '@support-desk/platform/core';
import { Format } from 'typebox/format';

// TypeBox's own checks (outside fastify's validator) take an email as they always have here:
// deskctl's arguments and what identity providers send are checked with the contract's schema.
// Set over TypeBox's own `email` format, which is stricter than this one.
Format.Set('email', (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v));

/** The first problem of a would-be user by the contract's `CreateUserBody`: `{field, message}` or null. */
export function firstUserProblem(user: Record<string, unknown>): { field: string; message: string } | null {
  const first = firstSchemaProblem(CreateUserBody, user);
  return first ? { field: first.path.replace(/^\//, '').replace(/\//g, '.'), message: first.message } : null;
}
