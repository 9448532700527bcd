// How the gateway holds its connections to a service: writes reuse a kept-alive connection while
// they keep coming, and the gateway (not the service) closes it once it has sat idle
// UPSTREAM_WRITE_IDLE_MS; with 0, every write has a connection of its own. The safety this buys
// in a rolling restart is shown end to end by test/e2e/test/faults.test.ts.
import type { Socket } from 'node:net';
import t from 'tap';
import { bearer, harness } from './helpers.js';

/** Every connection the stand-in accepts, and which of them the gateway ended (sent its FIN). */
function watchConnections(server: import('node:http').Server) {
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

const until = async (what: string, check: () => boolean, boundMs = 5000) => {
  const deadline = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

t.test('writes reuse one kept-alive connection, which the gateway closes once idle', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway({ UPSTREAM_WRITE_IDLE_MS: 300 });
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const seen = watchConnections(h.upstreams.requests.server);

  for (let i = 0; i < 5; i++) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/requests',
      headers: bearer(raw),
      payload: { title: `write ${i}` },
    });
    t.equal(res.statusCode, 200, `write ${i} answered`);
  }
  t.equal(seen.accepted.length, 1, 'five writes in a row went on one connection');

  await until('the gateway ends the idle write connection', () => seen.endedByGateway.size === 1);
  t.ok(seen.endedByGateway.has(seen.accepted[0]), 'the gateway, not the service, closed it');

  const after = await app.inject({
    method: 'PATCH',
    url: '/v1/requests/req_1',
    headers: bearer(raw),
    payload: { title: 'later' },
  });
  t.equal(after.statusCode, 200, 'a later write is answered');
  t.equal(seen.accepted.length, 2, 'on a new connection');
});

t.test('reads keep their connection far longer than writes', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway({ UPSTREAM_WRITE_IDLE_MS: 100 });
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const seen = watchConnections(h.upstreams.requests.server);

  const read = await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) });
  t.equal(read.statusCode, 200);
  const write = await app.inject({
    method: 'POST',
    url: '/v1/requests',
    headers: bearer(raw),
    payload: { title: 'x' },
  });
  t.equal(write.statusCode, 200);
  t.equal(seen.accepted.length, 2, 'reads and writes have a pool each');
  const [readSocket, writeSocket] = seen.accepted;
  await until('the write connection is ended', () => seen.endedByGateway.has(writeSocket));
  t.notOk(seen.endedByGateway.has(readSocket), 'the read connection is still open');
});

t.test('UPSTREAM_WRITE_IDLE_MS=0 gives every write a connection of its own', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway({ UPSTREAM_WRITE_IDLE_MS: 0 });
  const { raw } = h.identity.addKey(h.identity.addUser('admin'));
  const seen = watchConnections(h.upstreams.requests.server);

  for (let i = 0; i < 3; i++) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/requests',
      headers: bearer(raw),
      payload: { title: `write ${i}` },
    });
    t.equal(res.statusCode, 200, `write ${i} answered`);
  }
  t.equal(seen.accepted.length, 3, 'three writes, three connections');
});
