import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedCertificate, testLogger } from '@support-desk/platform/testing';
import t from 'tap';
import { composeService } from '../src/composition.js';
import { harness, testRedis } from './helpers.js';

t.test('TLS_CERT/TLS_KEY: serves HTTPS with HSTS', async (t) => {
  const { cert, key } = selfSignedCertificate(t);
  const h = await harness(t);
  const redis = testRedis(t);
  await redis.connect();
  const { app } = await composeService({
    config: { ...h.config, HSTS_MAX_AGE_SECONDS: 600 },
    logger: testLogger('gateway'),
    nc: h.nc,
    names: h.names,
    redis,
    https: { cert, key },
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
          // No SNI: an address is not a server name (Node 26 refuses one as servername).
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
