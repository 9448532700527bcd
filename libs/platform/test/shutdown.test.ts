import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { testEnv } from '../src/testing/index.js';

const fixture = fileURLToPath(new URL('./fixtures/slow-server.js', import.meta.url));

async function startFixture(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [fixture], {
    env: { ...process.env, MONGO_URL: testEnv.mongoUrl, NATS_URL: testEnv.natsUrl, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let port = 0;
  child.stdout.setEncoding('utf8');
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('fixture did not start')), 15_000);
    child.stdout.on('data', (chunk: string) => {
      for (const line of chunk.split('\n').filter(Boolean)) {
        lines.push(line);
        const parsed = JSON.parse(line);
        if (parsed.listening) {
          port = parsed.listening;
          clearTimeout(timer);
          resolve();
        }
      }
    });
  });
  await ready;
  return { child, port, lines };
}

t.test(
  'SIGTERM finishes in-flight requests, refuses new ones, closes dependencies and exits 0',
  async (t) => {
    const { child, port, lines } = await startFixture();
    const inFlight = fetch(`http://127.0.0.1:${port}/slow`).then(async (r) => ({
      status: r.status,
      body: await r.json(),
    }));
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    const result = await inFlight;
    t.equal(result.status, 200, 'the in-flight request completed');
    t.same(result.body, { success: true, data: { finished: true } });
    t.equal(code, 0, 'clean exit');
    t.ok(
      lines.some((l) => l.includes('shutdown complete')),
      'logged completion',
    );
    await t.rejects(fetch(`http://127.0.0.1:${port}/livez`), 'the port no longer accepts connections');
  },
);

t.test('shutdown is bounded by its timeout', async (t) => {
  const { child, port } = await startFixture({ SLOW_MS: '20000', SHUTDOWN_TIMEOUT_MS: '300' });
  fetch(`http://127.0.0.1:${port}/slow`).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 200));
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 1, 'exits non-zero when the timeout cuts shutdown short');
});
