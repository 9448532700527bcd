import type { Deskctl } from './deskctl.js';
import { type DemoUser, demoEmail } from './plan.js';

/**
 * The temporary API keys a run acts with: one per seeded user that calls the API, made and
 * revoked with deskctl (keys have no public API). They expire on their own after an hour in case
 * the seeder dies before revoking them, and a resumed run revokes what an interrupted one left.
 */
const KEY_LIFETIME_SECONDS = 3600;
/** Seeding is never rate limited. */
const KEY_LIMIT = 100_000;
export const keyName = (runId: string) => `deskctl seed ${runId}`;

export type SeedingKeys = Map<string, { id: string; key: string }>;

/**
 * Creates a key for every actor into `keys` (by handle). Every creation is awaited, also after a
 * failure, so no key is made after the caller's clean-up has revoked the others.
 */
export async function createSeedingKeys(
  desk: Deskctl,
  runId: string,
  actors: DemoUser[],
  keys: SeedingKeys,
): Promise<void> {
  const outcomes = await Promise.allSettled(
    actors.map(async (x) => {
      const key = await desk.run<{ id: string; key: string }>([
        'api-keys',
        'create',
        '--owner',
        demoEmail(x.handle, runId),
        '--name',
        keyName(runId),
        '--scopes',
        x.role === 'admin' ? 'admin' : 'requests:read,requests:write,users:read',
        '--plan',
        'enterprise',
        '--rate-limit',
        String(KEY_LIMIT),
        '--events-rate-limit',
        String(KEY_LIMIT),
        '--expires-in',
        `${KEY_LIFETIME_SECONDS}s`,
      ]);
      keys.set(x.handle, { id: key.id, key: key.key });
    }),
  );
  const failed = outcomes.find((o) => o.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Revokes the keys; returns how many were revoked now (not already revoked, no failure). */
export async function revokeKeys(desk: Deskctl, ids: string[]): Promise<number> {
  const revoked = await Promise.all(
    ids.map((id) =>
      desk
        .run<{ alreadyRevoked?: boolean }>(['api-keys', 'revoke', id, '--yes'])
        .then((r) => !r.alreadyRevoked)
        .catch(() => false),
    ),
  );
  return revoked.filter(Boolean).length;
}

/** Revokes the run's keys an interrupted attempt (killed before it could revoke them) left. */
export async function revokeLeftoverKeys(desk: Deskctl, runId: string): Promise<number> {
  const listed = await desk.run<{ keys: { id: string; name: string; revokedAt: string | null }[] }>([
    'api-keys',
    'list',
    '--active',
    '--all',
  ]);
  const left = listed.keys.filter((k) => k.name === keyName(runId) && !k.revokedAt);
  return revokeKeys(
    desk,
    left.map((k) => k.id),
  );
}
