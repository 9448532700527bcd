// How the gateway holds its connections to a service: writes reuse a kept-alive connection while
// they keep coming, and the gateway (not the service) closes it once it has sat idle
// UPSTREAM_WRITE_IDLE_MS; with 0, every write has a connection of its own. The safety this buys
// in a rolling restart is shown end to end by test/e2e/test/faults.test.ts.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import t, { type Test } from 'tap';
import { bearer, harness } from './helpers.js';

/** Every connection the stand-in accepts, and which of them the gateway ended (sent its FIN). */
function watchConnections(server: Server) {
  const accepted: Socket[] = [];
  const endedByGateway = new Set<Socket>();
  // The stand-in's own idle close (1 s) must not decide anything here.
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket: Socket) => {
    accepted.push(socket);
    socket.on('end', () => endedByGateway.add(socket));
  });
  return { accepted, endedByGateway };
}

/** A gateway with its write idle bound, a key to call it with, and the requests stand-in watched. */
async function gatewayWatched(t: Test, idleMs: number) {
  const h = await harness(t);
  const { app } = await h.gateway({ UPSTREAM_WRITE_IDLE_MS: idleMs });
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const seen = watchConnections(h.upstreams.requests.server);
  const write = async (method: 'POST' | 'PATCH', url: string, title: string) => {
    const res = await app.inject({ method, url, headers: bearer(raw), payload: { title } });
    t.equal(res.statusCode, 200, `${title}: answered`);
  };
  return { app, raw, seen, write };
}

const until = async (what: string, check: () => boolean, boundMs = 5000) => {
  const deadline = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

t.test('writes reuse one kept-alive connection, which the gateway closes once idle', async (t) => {
  const { seen, write } = await gatewayWatched(t, 300);

  for (let i = 0; i < 5; i++) await write('POST', '/v1/requests', `write ${i}`);
  t.equal(seen.accepted.length, 1, 'five writes in a row went on one connection');

  await until('the gateway ends the idle write connection', () => seen.endedByGateway.size === 1);
  t.ok(seen.endedByGateway.has(seen.accepted[0]), 'the gateway, not the service, closed it');

  await write('PATCH', '/v1/requests/req_1', 'a later write');
  t.equal(seen.accepted.length, 2, 'a later write goes on a new connection');
});

t.test('reads keep their connection far longer than writes', async (t) => {
  const { app, raw, seen, write } = await gatewayWatched(t, 100);

  const read = await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) });
  t.equal(read.statusCode, 200);
  await write('POST', '/v1/requests', 'a write');
  t.equal(seen.accepted.length, 2, 'reads and writes have a pool each');
  const [readSocket, writeSocket] = seen.accepted;
  await until('the write connection is ended', () => seen.endedByGateway.has(writeSocket));
  t.notOk(seen.endedByGateway.has(readSocket), 'the read connection is still open');
});

t.test('UPSTREAM_WRITE_IDLE_MS=0 gives every write a connection of its own', async (t) => {
  const { seen, write } = await gatewayWatched(t, 0);

  for (let i = 0; i < 3; i++) await write('POST', '/v1/requests', `write ${i}`);
  t.equal(seen.accepted.length, 3, 'three writes, three connections');
});
