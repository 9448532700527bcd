import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testLogger } from '@support-desk/platform/testing';
import t from 'tap';
import { buildApp } from '../src/app.js';
import { harness, testRedis } from './helpers.js';

t.test('TLS_CERT/TLS_KEY: serves HTTPS with HSTS', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sd-gw-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const h = await harness(t);
  const redis = testRedis(t);
  await redis.connect();
  const cert = readFileSync(join(dir, 'cert.pem'));
  const { app } = await buildApp({
    config: { ...h.config, HSTS_MAX_AGE_SECONDS: 600 },
    logger: testLogger('gateway'),
    nc: h.nc,
    names: h.names,
    redis,
    https: { cert, key: readFileSync(join(dir, 'key.pem')) },
  });
  t.teardown(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const res = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      request(
        {
          host: '127.0.0.1',
          port,
          path: '/livez',
          ca: cert,
          servername: '127.0.0.1',
          rejectUnauthorized: false,
        },
        (r) => {
          let body = '';
          r.on('data', (c) => {
            body += c;
          });
          r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body }));
        },
      )
        .on('error', reject)
        .end();
    },
  );
  t.equal(res.status, 200);
  t.equal(res.headers['strict-transport-security'], 'max-age=600; includeSubDomains');
  t.same(JSON.parse(res.body), { success: true, data: { status: 'ok' } });
});
