import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Teardownable } from './env.js';

/** What a receiver got: the raw body and the headers, as a verifier needs them. */
export interface Received {
  body: string;
  headers: Record<string, string>;
  at: number;
}

type Answer = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/**
 * A real webhook receiver on loopback (the webhooks service's tests and the e2e tests): it keeps
 * every request's raw body and headers, as a signature verifier needs them; `answer` decides each
 * response (default 204).
 */
export async function startReceiver(t: Teardownable, answer: Answer = (_q, res) => res.writeHead(204).end()) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        at: Date.now(),
      });
      answer(req, res, received.length);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, port, received };
}
