// The requests service as a reader of identity's RPC replies from other releases
// (libs/contracts/test/fixtures/rpc.json): its directory asks identity through the platform's
// identity RPC client over real NATS, and a peer answering with the frozen replies of every
// version (a double of identity, as another release would answer) is read and stored.
import { fixtures } from '@support-desk/contracts/fixtures';
import { encodeJson } from '@support-desk/platform/messaging';
import t from 'tap';
import { IdentityUnavailableError } from '../src/use-cases/directory.js';
import { harness } from './helpers.js';

t.test("identity's getUser and getGroup replies of every version feed the read model", async (t) => {
  const h = await harness(t);
  h.stopIdentity();
  const rpc = fixtures.rpc();
  let replies: Record<string, unknown> = rpc.v1.replies;
  const asked: unknown[] = [];
  const subs = (['getUser', 'getGroup'] as const).map((name) =>
    h.nc.subscribe(h.names.rpc[name], {
      callback: (_err, msg) => {
        asked.push(JSON.parse(new TextDecoder().decode(msg.data)));
        msg.respond(encodeJson(replies[name]));
      },
    }),
  );
  t.teardown(() => subs.forEach((s) => s.unsubscribe()));
  const { user } = rpc.v1.replies.getUser.reply as { user: { id: string; name: string } };
  const { group } = rpc.v1.replies.getGroup.reply as { group: { id: string; name: string } };
  for (const version of ['v1', 'unversioned', 'future'] as const) {
    replies = rpc[version].replies;
    await h.conn.collection('users_read_model').deleteMany({});
    await h.conn.collection('groups_read_model').deleteMany({});
    t.match(
      await h.deps.directory.refreshUser(user.id),
      { _id: user.id, name: user.name, role: 'agent', groupIds: [group.id] },
      `${version} getUser: read`,
    );
    t.match(
      await h.deps.directory.refreshGroup(group.id),
      { _id: group.id, name: group.name, deleted: false },
      `${version} getGroup: read`,
    );
    t.match(
      await h.conn.collection('users_read_model').findOne({ _id: user.id as never }),
      { name: user.name },
      `${version}: stored in the read model`,
    );
  }
  t.match(
    asked,
    [
      { v: 1, id: user.id },
      { v: 1, id: group.id },
    ],
    'requests carry their version',
  );
  // A reply without the fields the read model needs is identity not answering, not a bad entry.
  replies = { getUser: { v: 1, ok: true, reply: { found: true, user: { id: user.id, name: 'Half' } } } };
  const refused = await h.deps.directory.refreshUser(user.id).catch((err: unknown) => err);
  t.ok(refused instanceof IdentityUnavailableError, 'a malformed reply: identity unavailable');
  t.match(
    String(refused),
    /malformed reply: \/user\/\w+ Expected required property/,
    'naming the missing field',
  );
  t.match(
    await h.conn.collection('users_read_model').findOne({ _id: user.id as never }),
    { name: user.name },
    'the entry is left as it was',
  );
});
