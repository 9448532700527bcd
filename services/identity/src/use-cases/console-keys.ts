import { ROLE_SCOPES } from '@support-desk/contracts';
import { validationError } from '@support-desk/platform/core';
import type { UserDoc } from '../store/index.js';
import { createApiKey, type CreateApiKeyInput } from './api-keys.js';
import type { Deps, EventContext } from './deps.js';
import { confirmPassword } from './login.js';
import { findUserByEmail } from './user-lookups.js';

/**
 * An API key created in the settings console: the same `createApiKey` as deskctl (same checks,
 * same event), after two checks of the console's own. The scopes stay within the owner's role
 * (the gateway would cut them to it anyway; the console says so when the key is made), and a key
 * with the `admin` scope needs the signed-in administrator's password again (re-authentication:
 * a forgotten open session alone cannot mint full access).
 */
export async function createApiKeyInConsole(
  deps: Deps,
  ctx: EventContext,
  creator: { user: UserDoc; password: string | undefined; address: string },
  input: CreateApiKeyInput,
) {
  const owner = input.ownerEmail ? await findUserByEmail(deps, input.ownerEmail) : null;
  if (owner) {
    const allowed: readonly string[] = ROLE_SCOPES[owner.role];
    const beyond = input.scopes.filter((s) => !allowed.includes(s));
    if (beyond.length > 0) {
      throw validationError(
        'scopes',
        `${owner.email} is ${owner.role === 'agent' ? 'an' : 'a'} ${owner.role}: a key can have at most ${allowed.join(', ')} (not ${beyond.join(', ')})`,
      );
    }
  }
  if (input.scopes.includes('admin')) {
    if (!creator.password)
      throw validationError('password', 'enter your password to create a key with the admin scope');
    const confirmed = await confirmPassword(deps, creator.user, creator.password, creator.address);
    if (!confirmed.ok) throw validationError('password', confirmed.message);
  }
  return createApiKey(deps, ctx, input);
}
