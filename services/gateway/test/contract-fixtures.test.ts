// The gateway as a reader of messages from other releases (libs/contracts/test/fixtures): every
// credential notice of every version, and identity's RPC replies of every version.
import { jetstream } from '@nats-io/jetstream';
import type { CredentialNotice } from '@support-desk/contracts';
import { fixtures } from '@support-desk/contracts/fixtures';
import { encodeJson } from '@support-desk/platform';
import { eventually, testLogger, testNats } from '@support-desk/platform/testing';
import t from 'tap';
import { subscribeCredentialNotices } from '../src/events/credential-notices.js';
import { createIdentityClient } from '../src/events/identity-client.js';

t.test('credential notices of every version are applied; an unknown kind is skipped', async (t) => {
  const { nc, names } = await testNats(t);
  const handled: CredentialNotice[] = [];
  const notices = await subscribeCredentialNotices({
    nc,
    names,
    logger: testLogger('gateway'),
    handle: (n) => {
      handled.push(n);
    },
  });
  t.teardown(() => notices.stop());
  const { v1, unversioned, future } = fixtures.notices();
  const js = jetstream(nc);
  for (const n of [...v1, ...unversioned, ...future])
    await js.publish(names.credentialNotices, encodeJson(n));
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
  let reply = rpc.v1.replies;
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
    createIdentityClient({ nc, names, rpcTimeoutMs: 1000, apiKeyTtlMs: 0, userTtlMs: 0, clientTtlMs: 0 });
  const v1 = client();
  const user = (rpc.v1.replies.getUser.reply as { user: { id: string } }).user;
  t.match(await v1.getUser(user.id), { id: user.id, role: 'agent' }, 'v1 getUser');
  t.match(await v1.resolveApiKey('sd_key_x_y'), { valid: true, plan: 'standard' }, 'v1 resolveApiKey');
  t.match(await v1.getOAuthClient('cli_x'), { plan: 'professional' }, 'v1 getOAuthClient');
  t.same(await v1.globalAllowlist(), ['203.0.113.0/24'], 'v1 getSettings');
  t.match(seen[0], { v: 1, id: user.id }, 'requests carry their version');
  reply = { ...rpc.v1.replies, ...rpc.unversioned.replies };
  t.match(await client().getUser(user.id), { id: user.id }, 'an unversioned reply');
  reply = { ...rpc.v1.replies, ...rpc.future.replies };
  t.match(
    await client().getUser(user.id),
    { id: user.id, role: 'agent' },
    'a future reply: extra fields ignored',
  );
});
