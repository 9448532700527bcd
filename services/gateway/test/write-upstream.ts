import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * A service stand-in for writes: each call it receives creates a "request" (`req_<n>`), answered
 * 201 with Location; `?status=<code>` answers that status instead; while `hold()` is on, answers
 * wait until `release()`.
 */
export async function startWrites(t: Test) {
  let created = 0;
  const calls: { method: string; url: string; body: string }[] = [];
  let gate: Promise<void> | null = null;
  let open = () => undefined as void;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      calls.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString() });
      if (gate) await gate;
      const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 201);
      const id = `req_${++created}`;
      const body =
        status < 400
          ? { success: true, data: { id, createdAt: new Date().toISOString() } }
          : {
              success: false,
              error: { code: status < 500 ? 'VALIDATION_ERROR' : 'SERVER_ERROR', message: id },
            };
      res
        .writeHead(status, {
          'content-type': 'application/json; charset=utf-8',
          ...(status === 201 ? { location: `/v1/requests/${id}` } : {}),
          'x-upstream-only': 'not replayed',
        })
        .end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    hold() {
      gate = new Promise<void>((r) => {
        open = r;
      });
    },
    release() {
      gate = null;
      open();
    },
  };
}

/** JSON content type, and the Idempotency-Key when given. */
export const json = (key?: string) => ({
  'content-type': 'application/json',
  ...(key === undefined ? {} : { 'idempotency-key': key }),
});
