// The webhooks admin RPC client as a reader of other releases' replies (libs/contracts' frozen
// fixtures), served as they would arrive on the real NATS: this release's replies and a newer
// release's (extra fields, a higher `v`) are read; refusals become the API's AppError.
import { fixtures } from '@support-desk/contracts/fixtures';
import type { AdminActor, WebhooksAdminOp } from '@support-desk/contracts';
import t from 'tap';
import { AppError } from '../src/subpaths/core.js';
import { encodeJson, RpcError } from '../src/subpaths/messaging.js';
import { webhooksAdminClient, type WebhooksAdminFields } from '../src/subpaths/clients.js';
import { testNats, testSigner } from '../src/testing/index.js';

const actor: AdminActor = {
  userId: 'usr_01m83t4cm05wzwxk0s3c7d2vse',
  name: 'Ada Admin',
  email: 'ada@example.com',
  via: 'console',
  ip: '203.0.113.7',
};
const frozen = fixtures.webhooksAdmin();

/** Answers every request on the subject with `reply` (bytes as another release would send them). */
async function answering(reply: unknown) {
  const { nc, names } = await testNats(t);
  const sub = nc.subscribe(names.webhooksAdmin, {
    callback: (_e, msg) => void msg.respond(encodeJson(reply)),
  });
  t.teardown(() => sub.unsubscribe());
  return webhooksAdminClient(nc, names, testSigner('identity'), 2000);
}

for (const version of ['v1', 'future'] as const) {
  t.test(`${version} replies of every op are read`, async (t) => {
    for (const [op, reply] of Object.entries(frozen[version].replies)) {
      const client = await answering(reply);
      const fields = frozen.v1.requests[op] as unknown as WebhooksAdminFields<WebhooksAdminOp>;
      const got = await client.call(actor, op as WebhooksAdminOp, fields);
      t.equal(got.ok, true, `${op} (${version})`);
    }
  });
}

t.test('refusals are the API error; a code this release does not know is still a refusal', async (t) => {
  for (const [name, reply] of Object.entries(frozen.v1.errors)) {
    const client = await answering(reply);
    const err = await client
      .call(actor, 'get', { id: 'whk_01m83t4cm070r013tk29rkyyag' })
      .catch((e: unknown) => e);
    t.ok(err instanceof AppError, name);
    const expected = (reply as { reply: { error: { code: string; message: string } } }).reply.error;
    t.match(err, { code: expected.code, message: expected.message });
  }
  const [reply] = Object.values(frozen.future.errors);
  const client = await answering(reply);
  const err = await client.call(actor, 'list', {}).catch((e: unknown) => e);
  t.ok(err instanceof AppError);
  t.match(err, { code: 'SERVER_ERROR', message: 'Too many subscriptions' });
});

t.test('a reply without the fields the client reads is an RpcError naming the field', async (t) => {
  const client = await answering({ v: 1, ok: true, reply: { ok: true, webhook: { id: 'whk_x' } } });
  const err = await client.call(actor, 'get', { id: 'whk_x' }).catch((e: unknown) => e);
  t.ok(err instanceof RpcError);
  t.match((err as Error).message, /malformed reply: \/webhook\/\w+/);
});
