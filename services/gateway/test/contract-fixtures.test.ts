// The gateway as a reader of messages from other releases (libs/contracts/test/fixtures): every
// credential notice of every version, and identity's RPC replies of every version.
import type { CredentialNotice } from '@support-desk/contracts';
import { fixtures } from '@support-desk/contracts/fixtures';
import { encodeJson } from '@support-desk/platform/messaging';
import {
  eventually,
  publishSigned,
  testLogger,
  testNats,
  testSigner,
  testVerifier,
} from '@support-desk/platform/testing';
import t from 'tap';
import { subscribeCredentialNotices } from '../src/events/credential-notices.js';
import { createIdentityClient } from '../src/events/identity-client.js';

t.test('credential notices of every version are applied; an unknown kind is skipped', async (t) => {
  const { nc, names } = await testNats(t);
  const handled: CredentialNotice[] = [];
  const notices = await subscribeCredentialNotices({
    nc,
    names,
    verifier: testVerifier(),
    logger: testLogger('gateway'),
    handle: (n) => {
      handled.push(n);
    },
  });
  t.teardown(() => notices.stop());
  const { v1, unversioned, future } = fixtures.notices();
  for (const n of [...v1, ...unversioned, ...future])
    await publishSigned(nc, names.credentialNotices, encodeJson(n), { as: 'identity' });
  const known = v1.length + unversioned.length + 1;
  await eventually(() => handled.length === known, { what: `${known} notices applied` });
  t.same(
    handled.map((n) => n.kind),
    [...v1, ...unversioned, future[0]].map((n) => n.kind),
    'every known kind, whatever its version, in order',
  );
  t.equal(handled.at(-1)?.tokensExpireBy, future[0].tokensExpireBy, 'the fields it knows are read');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(handled.length, known, 'the kind from the future was skipped, not applied');
});

t.test("identity's RPC replies of every version are read", async (t) => {
  const { nc, names } = await testNats(t);
  const rpc = fixtures.rpc();
  let reply: Record<string, unknown> = rpc.v1.replies;
  const seen: unknown[] = [];
  const subs = (['getUser', 'resolveApiKey', 'getOAuthClient', 'getSettings'] as const).map((name) =>
    nc.subscribe(names.rpc[name], {
      callback: (_err, msg) => {
        seen.push(JSON.parse(new TextDecoder().decode(msg.data)));
        msg.respond(encodeJson(reply[name]));
      },
    }),
  );
  t.teardown(() => subs.forEach((s) => s.unsubscribe()));
  const client = () =>
    createIdentityClient({
      nc,
      names,
      signer: testSigner('gateway'),
      rpcTimeoutMs: 1000,
      apiKeyTtlMs: 0,
      userTtlMs: 0,
      clientTtlMs: 0,
      staleIfErrorMs: 0,
    });
  const user = (rpc.v1.replies.getUser.reply as { user: { id: string } }).user;
  for (const version of ['v1', 'unversioned', 'future'] as const) {
    reply = rpc[version].replies;
    const c = client();
    t.match(await c.getUser(user.id), { id: user.id, role: 'agent' }, `${version} getUser`);
    t.match(
      await c.resolveApiKey('sd_key_x_y'),
      { valid: true, plan: 'standard', owner: { id: user.id } },
      `${version} resolveApiKey`,
    );
    t.match(await c.getOAuthClient('cli_x'), { plan: 'professional' }, `${version} getOAuthClient`);
    t.same(await c.globalAllowlist(), ['203.0.113.0/24'], `${version} getSettings`);
  }
  t.match(seen[0], { v: 1, id: user.id }, 'requests carry their version');
  // A reply without the fields the gateway reads: identity is unavailable, not a crash later on.
  reply = { ...rpc.v1.replies, getUser: { v: 1, ok: true, reply: { found: true, user: { id: user.id } } } };
  await t.rejects(client().getUser(user.id), { code: 'SERVICE_UNAVAILABLE' }, 'a malformed reply');
});
