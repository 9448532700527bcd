import { bodyDigest, createPrincipalSigner, createPrincipalVerifier } from '@support-desk/platform/core';
import { testEnv, testPrincipal, testPrincipalKeys } from '@support-desk/platform/testing';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import t from 'tap';
import { createFastPrincipalSigner } from '../src/use-cases/principal-signer.js';

t.test('the gateway signer makes the same assertion as the platform signer', async (t) => {
  const keys = testEnv.principalKeys;
  const verify = createPrincipalVerifier(keys.verifyKeys, 'requests');
  const fast = createFastPrincipalSigner(keys.signingKey);
  const { clientIp: _ip, userAgent: _ua, requestId: _id, ...fixed } = testPrincipal('agent');
  const bound = { audience: 'requests', method: 'GET', url: '/v1/requests?status=open' };
  const at = { method: bound.method, url: bound.url };
  const calls = [
    { clientIp: '203.0.113.7', userAgent: 'curl/8', requestId: 'req-1' },
    { clientIp: null, userAgent: null, requestId: 'req-2' },
    { clientIp: '::1', userAgent: 'evil "quoted" \\ agent\n\u2028 ünïcode', requestId: 'req-3' },
  ];
  for (const call of calls) {
    const fastToken = fast(fixed, { ...call, ...bound });
    const platformToken = createPrincipalSigner(keys.signingKey)({ ...fixed, ...call }, bound);
    t.same(
      await verify(fastToken, at),
      { ...fixed, ...call },
      `verifies as the full principal (${call.requestId})`,
    );
    t.same(decodeProtectedHeader(fastToken), decodeProtectedHeader(platformToken), 'same header');
    const a = decodeJwt(fastToken);
    const b = decodeJwt(platformToken);
    t.same({ ...a, iat: 0, exp: 0 }, { ...b, iat: 0, exp: 0 }, 'same claims');
    t.match(
      a,
      { aud: 'requests', htm: 'GET', htu: '/v1/requests?status=open' },
      'bound to the service and call',
    );
    t.equal((a.exp as number) - (a.iat as number), 10, 'lives 10 s');
  }
  const body = Buffer.from('{"title":"Printer on fire"}');
  const posted = decodeJwt(fast(fixed, { ...calls[0], ...bound, method: 'POST', body }));
  t.equal(posted.bd, bodyDigest(body), "a body is bound by its digest, as the platform's");
  t.equal(
    posted.bd,
    decodeJwt(createPrincipalSigner(keys.signingKey)({ ...fixed, ...calls[0] }, { ...bound, body })).bd,
  );
  const upload = decodeJwt(fast(fixed, { ...calls[0], ...bound, method: 'POST', streamed: true }));
  t.match(upload, { jti: /^[A-Za-z0-9_-]{22}$/ }, 'a streamed body by a one-time id');
  t.notOk(upload.bd);
  const token = fast(fixed, { ...calls[0], ...bound });
  await t.rejects(verify(`${token}x`, at), 'a tampered signature is refused');
  await t.rejects(verify(token, { ...at, url: '/v1/events' }), 'another call is refused');
  await t.rejects(createPrincipalVerifier(keys.verifyKeys, 'audit')(token, at), 'another service refuses it');
  const other = createFastPrincipalSigner(testPrincipalKeys().signingKey);
  await t.rejects(verify(other(fixed, { ...calls[0], ...bound }), at), 'another key is refused');
});
