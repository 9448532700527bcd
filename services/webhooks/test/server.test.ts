import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventually, freePort, testEnv, testMongo, testNats } from '@support-desk/platform/testing';
import t from 'tap';
import { secretKey } from './helpers.js';

const SERVER = fileURLToPath(new URL('../src/server.js', import.meta.url));

t.test('server: readyz, metrics on their own port, graceful shutdown on SIGTERM', async (t) => {
  const conn = await testMongo(t, 'webhooks');
  const { names } = await testNats(t);
  const port = await freePort();
  const metricsPort = await freePort();
  const env = {
    ...process.env,
    WEBHOOKS_PORT: String(port),
    METRICS_PORT: String(metricsPort),
    MONGO_URL: testEnv.mongoUrl,
    MONGO_DB: conn.name,
    NATS_URL: testEnv.natsUrl,
    NATS_NAMESPACE: names.namespace,
    LOG_LEVEL: 'silent',
    PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys,
  };
  const child = spawn(process.execPath, [SERVER], {
    stdio: 'ignore',
    env: { ...env, WEBHOOKS_SECRET_KEY: secretKey() },
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const ready = await eventually(
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      return res.status === 200
        ? ((await res.json()) as { data: { checks: Record<string, string> } })
        : false;
    },
    { what: 'ready', timeoutMs: 20_000 },
  );
  t.same(ready.data.checks, { mongodb: 'up', nats: 'up' });
  t.equal(
    (await fetch(`http://127.0.0.1:${port}/v1/webhooks`)).status,
    401,
    'the API needs the gateway principal',
  );
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  t.match(metrics, /process_cpu_seconds_total/);
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'clean exit after draining');

  // Without its secret key it refuses to start, naming the variable.
  const refused = spawn(process.execPath, [SERVER], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  refused.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((r) => refused.once('exit', (c) => r(c)));
  t.equal(code, 1);
  t.match(stderr, /WEBHOOKS_SECRET_KEY/);
});
