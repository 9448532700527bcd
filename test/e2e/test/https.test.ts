// HTTPS (the spec: "All calls must use HTTPS"): the gateway serves TLS itself with a self-signed
// certificate generated here (TLS_CERT / TLS_KEY); the smoke checks run over TLS only.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { cast } from '../src/actors.js';
import { expectError, expectOk } from '../src/expect.js';
import { request } from '../src/http.js';
import { startStack } from '../src/stack.js';
import { selfSignedCertificate } from '@support-desk/platform/testing';
import { createRequest } from '../src/world.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (!hasOpenssl()) {
  t.test(
    'HTTPS smoke checks',
    { skip: 'openssl is not installed: cannot generate a certificate (apt-get install openssl)' },
    () => undefined,
  );
} else {
  const { certFile, keyFile, cert: ca } = selfSignedCertificate(t);
  const stack = await startStack(t, { tls: { certFile, keyFile, ca } });
  const { admin, agent } = await cast(stack);

  t.test('smoke checks over TLS', async (t) => {
    t.match(stack.origin, /^https:\/\//, 'the gateway URL is https');
    const me = await agent.api.get('/v1/me');
    expectOk(t, me, 200, 'GET /v1/me over HTTPS');
    t.match(String(me.headers['strict-transport-security']), /max-age=\d+/, 'HSTS header');
    expectError(
      t,
      await stack.api(null).get('/v1/requests'),
      401,
      'UNAUTHORIZED',
      'no credential over HTTPS',
    );
    expectError(t, await agent.api.get('/v1/nothing-here'), 404, 'NOT_FOUND', 'unknown route over HTTPS');
    expectError(
      t,
      await agent.api.delete('/v1/requests/req_00000000000000000000000000'),
      403,
      'FORBIDDEN',
      'DELETE by an agent over HTTPS',
    );

    const req = await createRequest(t, agent.api);
    t.equal(req.status, 'open', 'create → open over HTTPS');
    expectOk(
      t,
      await agent.api.patch(`/v1/requests/${req.id}`, { status: 'in_progress' }),
      200,
      'PATCH over HTTPS',
    );
    const bytes = randomBytes(64 * 1024);
    const up = expectOk(
      t,
      await agent.api.upload(`/v1/requests/${req.id}/attachments`, 'tls.bin', bytes),
      201,
      'upload over HTTPS',
    );
    t.ok(
      String(up?.url).startsWith(`${stack.base}/attachments/`),
      `attachment url is under the https base (${up?.url})`,
    );
    const dl = await agent.api.get(new URL(up.url).pathname, { headers: { accept: '*/*' } });
    t.ok(dl.status === 200 && dl.body.equals(bytes), 'download over HTTPS is byte-identical');
    const events = expectOk(
      t,
      await admin.api.get(`/v1/events?resourceId=${req.id}`),
      200,
      'events over HTTPS',
    );
    t.ok(Array.isArray(events?.events), 'events list');
    const h = await agent.api.get('/v1/requests');
    t.ok(h.headers['x-ratelimit-limit'], 'rate-limit headers over HTTPS');

    const meta = await request(`${stack.origin}/.well-known/oauth-authorization-server`, { ca });
    t.equal(meta.status, 200, 'OAuth metadata over HTTPS');
    t.equal(meta.json?.issuer, stack.origin, 'issuer is the https origin');
    t.match(String(meta.json?.token_endpoint), /^https:\/\//, 'token endpoint is https');
    const token = await request(`${stack.origin}/oauth/token`, {
      ca,
      method: 'POST',
      body: 'grant_type=password&username=a&password=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.ok(token.status === 400 || token.status === 401, `token endpoint answers over HTTPS (${token.status})`);
    t.equal(
      token.json?.error === 'unsupported_grant_type' || token.json?.error === 'invalid_client',
      true,
      'RFC 6749 error',
    );
  });

  t.test('certificate checks and plain HTTP', async (t) => {
    const untrusted = await request(`${stack.base}/me`).then(
      () => 'connected',
      (err: Error) => err.message,
    );
    t.match(
      untrusted,
      /self[- ]signed|certificate/i,
      'a client that does not trust the certificate refuses it',
    );
    const plain = await request(`http://127.0.0.1:${stack.ports.gateway}/v1/me`, {
      headers: { authorization: `Bearer ${agent.key}` },
      timeoutMs: 5000,
    }).then(
      (r) => r.status,
      () => 0,
    );
    t.ok(
      plain === 0 || plain === 400,
      `plain HTTP on the TLS port gets no API answer (${plain || 'connection refused'})`,
    );
  });
}
