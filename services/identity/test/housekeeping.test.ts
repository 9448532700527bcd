import t from 'tap';
import { issueCode } from '../src/use-cases/authorize.js';
import { cliContext } from '../src/use-cases/deps.js';
import { createHousekeeping } from '../src/use-cases/housekeeping.js';
import { login, sessionUser } from '../src/use-cases/login.js';
import { createOAuthClient } from '../src/use-cases/oauth-clients.js';
import { revokeGrant } from '../src/use-cases/grant-revocation.js';
import { redeemCode } from '../src/use-cases/token-grants.js';
import { createUser } from '../src/use-cases/users.js';
import { createKeyring } from '../src/oauth/keys.js';
import type { GrantDoc, OAuthClientDoc } from '../src/store/index.js';
import { harness } from './helpers.js';

const S = 1000;

t.test(
  'housekeeping purges expired sessions, lapsed login counters and spent grants, and nothing else',
  async (t) => {
    const h = await harness(t, {
      OAUTH_ACCESS_TTL_SECONDS: '600',
      OAUTH_REFRESH_TTL_SECONDS: '3600',
      OAUTH_SESSION_TTL_SECONDS: '1800',
      OAUTH_CODE_TTL_SECONDS: '60',
      LOGIN_THROTTLE_WINDOW_SECONDS: '900',
    });
    const { deps } = h;
    const store = h.stored;
    // A batch of 2 makes every purge below take several rounds.
    const housekeeping = createHousekeeping(deps, { intervalMs: 3_600_000, batch: 2 });
    t.teardown(() => housekeeping.stop());
    const keyring = await createKeyring(h.config, deps.clock);
    const password = 'correct horse battery staple';
    const user = await createUser(deps, cliContext(), {
      email: 'hk@example.com',
      name: 'Housekeeping',
      role: 'agent',
      password,
    });
    const redirectUri = 'http://127.0.0.1:9/callback';
    const created = await createOAuthClient(deps, cliContext(), {
      name: 'HK App',
      redirectUris: [redirectUri],
    });
    const client = (await store.oauthClients.findById(created.client_id).lean<OAuthClientDoc>())!;
    const userDoc = (await store.users.findById(user.id).lean())!;
    const meta = { userAgent: 'tap', requestId: 'req-hk' };

    // Three sessions; four failure counters (an unknown account from two addresses, and the two addresses).
    const sessions: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await login(deps, { email: 'hk@example.com', password, ip: '10.0.0.9', ...meta });
      if (!res.ok) throw new Error(`login failed: ${res.message}`);
      sessions.push(res.sessionToken);
    }
    for (const ip of ['10.0.0.1', '10.0.0.2']) {
      const res = await login(deps, {
        email: 'nobody@example.com',
        password: 'wrong password!!',
        ip,
        ...meta,
      });
      t.equal(res.ok, false);
    }
    // Grants: one code never redeemed, two redeemed (live refresh families), one redeemed then revoked.
    const grant = async (redeem: boolean) => {
      const code = await issueCode(
        deps,
        { client, redirectUri, scopes: ['requests:read'], state: undefined, codeChallenge: null },
        userDoc,
        ['requests:read'],
      );
      if (redeem) await redeemCode(deps, keyring, client, { code, redirectUri });
      return code.split('.')[0];
    };
    const unredeemed = await grant(false);
    const live = await grant(true);
    const untouched = await grant(true);
    const revoked = await grant(true);
    await revokeGrant(deps, (await store.grants.findById(revoked).lean<GrantDoc>())!, 'test');
    await h.relay.idle();

    const remaining = async () => ({
      sessions: await store.sessions.countDocuments(),
      loginAttempts: await store.loginAttempts.countDocuments(),
      grants: (await store.grants.find({}, { _id: 1 }).sort({ _id: 1 }).lean()).map((g) => g._id),
    });
    t.same(await remaining(), {
      sessions: 3,
      loginAttempts: 4,
      grants: [unredeemed, live, untouched, revoked],
    });

    t.same(
      await housekeeping.purgeOnce(),
      { sessions: 0, loginAttempts: 0, grants: 0 },
      'nothing is due yet',
    );
    t.ok(await sessionUser(deps, sessions[0]), 'a live session still signs in');

    h.advance(900 * S + 1);
    t.same(
      await housekeeping.runNow(),
      { sessions: 0, loginAttempts: 4, grants: 2 },
      'after the throttling window: the counters; after code expiry or revocation + one access-token lifetime: those grants',
    );
    t.same((await remaining()).grants, [live, untouched], 'the redeemed, unrevoked grants stay');

    h.advance(900 * S); // 1800 s + 1 ms: the sessions have expired
    t.same(await housekeeping.purgeOnce(), { sessions: 3, loginAttempts: 0, grants: 0 });
    t.equal(await sessionUser(deps, sessions[0]), null);

    // A grant revoked while the relay is down keeps its pending event: it is not purged until published.
    await h.relay.pause();
    await revokeGrant(deps, (await store.grants.findById(live).lean<GrantDoc>())!, 'test');
    h.advance(601 * S);
    t.same(
      await housekeeping.purgeOnce(),
      { sessions: 0, loginAttempts: 0, grants: 0 },
      'pending event: kept',
    );
    h.relay.resume();
    await h.waitForEvent(
      (e) => e.resourceId === live && 'revokedAt' in (e.changes ?? {}),
      'revocation event',
    );
    await h.relay.idle();
    t.same(await housekeeping.purgeOnce(), { sessions: 0, loginAttempts: 0, grants: 1 }, 'published: purged');

    // The untouched grant's refresh family expires 3600 s after redemption, its last access token 600 s later.
    h.advance(3600 * S + 600 * S - (1800 * S + 601 * S) - 10 * S);
    t.same(
      await housekeeping.purgeOnce(),
      { sessions: 0, loginAttempts: 0, grants: 0 },
      'refresh family alive',
    );
    h.advance(20 * S);
    t.same(await housekeeping.purgeOnce(), { sessions: 0, loginAttempts: 0, grants: 1 });
    t.same(await remaining(), { sessions: 0, loginAttempts: 0, grants: [] });
  },
);
