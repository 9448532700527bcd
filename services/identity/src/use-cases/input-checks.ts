import { FormatRegistry } from '@sinclair/typebox';
import { CreateUserBody } from '@support-desk/contracts';
import { Value } from '@sinclair/typebox/value';

// TypeBox's own checks (outside fastify's validator) need the `email` format registered once:
// deskctl's arguments and what identity providers send are checked with the contract's schema.
if (!FormatRegistry.Has('email')) {
  FormatRegistry.Set('email', (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v));
}

/** The first problem of a would-be user by the contract's `CreateUserBody`: `{field, message}` or null. */
export function firstUserProblem(user: Record<string, unknown>): { field: string; message: string } | null {
  const first = Value.Errors(CreateUserBody, user).First();
  return first ? { field: first.path.replace(/^\//, '').replace(/\//g, '.'), message: first.message } : null;
}
