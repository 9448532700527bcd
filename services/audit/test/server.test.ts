import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventually, freePort, testEnv, testMongo, testNats } from '@support-desk/platform/testing';
import t from 'tap';
import { countEvents, makeEvent, publish } from './helpers.js';

const SERVER = fileURLToPath(new URL('../src/server.js', import.meta.url));

t.test('server: readyz, ingests, graceful shutdown on SIGTERM', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, [SERVER], {
    stdio: 'ignore',
    env: {
      ...process.env,
      AUDIT_PORT: String(port),
      METRICS_PORT: String(metricsPort),
      MONGO_URL: testEnv.mongoUrl,
      MONGO_DB: conn.name,
      NATS_URL: testEnv.natsUrl,
      NATS_NAMESPACE: names.namespace,
      LOG_LEVEL: 'silent',
      PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys,
    },
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
  const unauth = await fetch(`http://127.0.0.1:${port}/v1/events`);
  t.equal(unauth.status, 401, 'the API needs the gateway principal');

  await publish(nc, names, [makeEvent('request.created'), makeEvent('system.sync_completed')]);
  await eventually(async () => (await countEvents(conn)) === 2, { what: 'ingested by the server' });
  // Metrics on their own port, not on the API's.
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  t.match(metrics, /consumer_messages_total\{consumer="audit",outcome="acked"\} 2/);
  t.match(metrics, /process_cpu_seconds_total/);
  t.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'the API port has no /metrics');
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'clean exit after draining');
});
