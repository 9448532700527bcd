// Identity as the RPC server of other releases' clients (libs/contracts/test/fixtures): requests
// of every version are answered, in the versioned envelope (when signed by a service that may ask).
import { fixtures } from '@support-desk/contracts/fixtures';
import { decodeJson, encodeJson } from '@support-desk/platform/messaging';
import t from 'tap';
import { callerOf, harness } from './helpers.js';

t.test('RPC requests of every version are answered in the versioned envelope', async (t) => {
  const h = await harness(t);
  const rpc = fixtures.rpc();
  const all = [
    ...Object.entries(rpc.v1.requests),
    ...Object.entries(rpc.unversioned.requests),
    ...Object.entries(rpc.future.requests),
  ];
  for (const [name, request] of all) {
    const operation = name as keyof typeof h.names.rpc;
    const subject = h.names.rpc[operation];
    const data = encodeJson(request);
    // Signed by a service that may ask it, as every caller of this release signs.
    const headers = callerOf(operation).signer.sign(subject, data);
    const msg = await h.nc.request(subject, data, { timeout: 2000, headers });
    const body = decodeJson<{ v: number; ok: boolean; reply: Record<string, unknown> }>(msg.data);
    t.match(body, { v: 1, ok: true }, `${name} v${String(request.v ?? 'none')}`);
    t.type(body.reply, 'object');
  }
});
