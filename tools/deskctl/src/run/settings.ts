import {
  bootstrap,
  firstUserProblem,
  getSettings,
  rotateDevSigningKey,
  setGlobalAllowlist,
} from '@support-desk/identity/admin';
import { parseDuration, required, UsageError } from '../args.js';
import type { Run } from '../command.js';
import { allowlistFrom } from './credentials.js';

export const runs: Record<string, Run> = {
  async 'settings ip-allowlist set'(deps, ctx, _v, pos) {
    const list = allowlistFrom(pos[0]);
    if (list.length === 0) throw new UsageError('empty allowlist; use "settings ip-allowlist clear"');
    const s = await setGlobalAllowlist(deps, ctx, list);
    return { json: s, text: `global API-key allowlist: ${s.globalAllowlist.join(', ')}` };
  },
  async 'settings ip-allowlist clear'(deps, ctx) {
    const s = await setGlobalAllowlist(deps, ctx, []);
    return { json: s, text: 'global API-key allowlist cleared (no restriction)' };
  },
  async 'settings ip-allowlist show'(deps) {
    const s = await getSettings(deps);
    return {
      json: s,
      text: s.globalAllowlist.length
        ? s.globalAllowlist.join('\n')
        : '(empty: API keys may be used from any address)',
    };
  },
  async 'oauth-keys rotate'(deps) {
    const result = await rotateDevSigningKey(deps.config, deps.clock());
    return {
      json: result,
      text: `new signing key ${result.kid}; previous keys stay in the JWKS until ${result.retainUntil}`,
    };
  },
  async bootstrap(deps, ctx, v) {
    const email = required(v, 'email');
    const name = required(v, 'name');
    const first = firstUserProblem({ email, name, role: 'admin' });
    if (first) throw new UsageError(`--${first.field} ${first.message}`);
    const lifetime = typeof v['expires-in'] === 'string' ? parseDuration(v['expires-in']) : undefined;
    const result = await bootstrap(deps, ctx, {
      email,
      name,
      ifNone: v['if-none'] === true,
      ...(lifetime !== undefined ? { expiresInSeconds: lifetime } : {}),
    });
    if (result.skipped) return { json: { skipped: true }, text: 'an admin already exists; nothing to do' };
    const expiry = result.expiresAt
      ? `It expires at ${result.expiresAt}: create your own admin key with it before then.`
      : 'Store it now: it is shown only once.';
    return {
      json: result,
      text: `created admin ${result.user.email} (${result.user.id}) and API key ${result.keyId}\n\n  ${result.key}\n\n${expiry}`,
    };
  },
};
