import {
  bodyDigest,
  createPrincipalSigner,
  createPrincipalVerifier,
  principalSigningKey,
  signClaimsBatch,
} from '@support-desk/platform/core';
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
    const fastToken = await fast(fixed, { ...call, ...bound });
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
  const posted = decodeJwt(await fast(fixed, { ...calls[0], ...bound, method: 'POST', body }));
  t.equal(posted.bd, bodyDigest(body), "a body is bound by its digest, as the platform's");
  t.equal(
    posted.bd,
    decodeJwt(createPrincipalSigner(keys.signingKey)({ ...fixed, ...calls[0] }, { ...bound, body })).bd,
  );
  const upload = decodeJwt(await fast(fixed, { ...calls[0], ...bound, method: 'POST', streamed: true }));
  t.match(upload, { jti: /^[A-Za-z0-9_-]{22}$/ }, 'a streamed body by a one-time id');
  t.notOk(upload.bd);
  const token = await fast(fixed, { ...calls[0], ...bound });
  await t.rejects(verify(`${token}x`, at), 'a tampered signature is refused');
  await t.rejects(verify(token, { ...at, url: '/v1/events' }), 'another call is refused');
  await t.rejects(createPrincipalVerifier(keys.verifyKeys, 'audit')(token, at), 'another service refuses it');
  const other = createFastPrincipalSigner(testPrincipalKeys().signingKey);
  await t.rejects(verify(await other(fixed, { ...calls[0], ...bound }), at), 'another key is refused');
});

t.test('the calls of one turn share one signature; each is still bound to its own call', async (t) => {
  const keys = testEnv.principalKeys;
  const verify = createPrincipalVerifier(keys.verifyKeys, 'requests');
  const sign = createFastPrincipalSigner(keys.signingKey, { batchMax: 4 });
  const { clientIp: _ip, userAgent: _ua, requestId: _id, ...fixed } = testPrincipal('agent');
  const callOf = (i: number) => ({
    clientIp: '203.0.113.7',
    userAgent: 'curl/8',
    requestId: `req-${i}`,
    audience: 'requests',
    method: 'GET',
    url: `/v1/requests/req_${i}`,
  });
  // Ten calls in one turn: batches of 4, 4 and 2.
  const tokens = await Promise.all(Array.from({ length: 10 }, (_, i) => sign(fixed, callOf(i))));
  const batchOf = (token: string) => token.split('~')[2];
  t.ok(
    tokens.every((token) => token.split('~').length === 3),
    'every assertion names its claims, its place and the batch',
  );
  t.equal(new Set(tokens.map(batchOf)).size, 3, 'one signature per batch of at most four calls');
  for (const [i, token] of tokens.entries()) {
    t.same(
      await verify(token, { method: 'GET', url: `/v1/requests/req_${i}` }),
      { ...fixed, clientIp: '203.0.113.7', userAgent: 'curl/8', requestId: `req-${i}` },
      `call ${i} verifies as its own full principal`,
    );
  }
  const [claims, index, batch] = tokens[1].split('~');
  const at = { method: 'GET', url: '/v1/requests/req_1' };
  await t.rejects(verify(tokens[1], { ...at, url: '/v1/requests/req_0' }), 'another call is refused');
  await t.rejects(verify(tokens[0], at), "another call's assertion of the same batch is refused");
  await t.rejects(verify(`${claims}~0~${batch}`, at), 'claims at another place of the batch are refused');
  await t.rejects(verify(`${claims}~${index}~${batch}x`, at), 'a tampered batch signature is refused');
  await t.rejects(
    verify(`${claims}~${index}~${tokens[5].split('~')[2]}`, at),
    'claims under another batch are refused',
  );
  const forged = Buffer.from(
    Buffer.from(claims, 'base64url').toString().replace('"role":"agent"', '"role":"admin"'),
  ).toString('base64url');
  await t.rejects(verify(`${forged}~${index}~${batch}`, at), 'changed claims are refused');
  await t.rejects(
    createPrincipalVerifier(keys.verifyKeys, 'audit')(tokens[1], at),
    'another service refuses it',
  );
  await t.rejects(verify(`${claims}~${index}`, at), 'claims without their batch are refused');
  t.same(
    await verify(tokens[1], at),
    await verify(tokens[1], at),
    'a batch verified once is known (the same answer from the kept batch)',
  );
});

t.test('an expired batched assertion is refused by the service', async (t) => {
  const keys = testEnv.principalKeys;
  const verify = createPrincipalVerifier(keys.verifyKeys, 'requests');
  const key = principalSigningKey(keys.signingKey);
  const at = { method: 'GET', url: '/v1/requests' };
  const claimsAt = (iat: number) =>
    JSON.stringify({
      p: testPrincipal('agent'),
      v: 1,
      iss: 'support-desk-gateway',
      aud: 'requests',
      htm: 'GET',
      htu: '/v1/requests',
      bd: bodyDigest(),
      iat,
      exp: iat + 10,
    });
  const now = Math.floor(Date.now() / 1000);
  const fresh = signClaimsBatch(key, [claimsAt(now), claimsAt(now)], now);
  t.ok(await verify(fresh[1], at), 'a fresh batch is accepted');
  const old = now - 16;
  const expired = signClaimsBatch(key, [claimsAt(old), claimsAt(old)], old);
  await t.rejects(verify(expired[0], at), 'a batch past its exp (and leeway) is refused');
  // Fresh claims under an expired batch, and expired claims under a fresh batch.
  const mixed = signClaimsBatch(key, [claimsAt(old), claimsAt(now)], now);
  await t.rejects(verify(mixed[0], at), 'expired claims under a fresh batch are refused');
  t.ok(await verify(mixed[1], at), 'their fresh neighbour is accepted');
});
