import { notFound } from '@support-desk/platform/core';
import type { UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';

// The two ways every other use case finds a user, in a module that imports no other use case, so
// that keys, credentials and user changes can all look users up without importing each other.

/** The user with this id, or NOT_FOUND. */
export async function findUser(deps: Deps, id: string): Promise<UserDoc> {
  const user = await deps.users.findById(id);
  if (!user) throw notFound('User');
  return user;
}

/** The user with this email (any case), or null; with the password hash only when asked. */
export const findUserByEmail = (deps: Deps, email: string, withPassword = false) =>
  deps.users.findByEmail(email, { withPassword });
