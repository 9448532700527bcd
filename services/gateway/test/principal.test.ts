import { createPrincipalSigner, createPrincipalVerifier } from '@support-desk/platform';
import { testEnv, testPrincipal } from '@support-desk/platform/testing';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import t from 'tap';
import { createFastPrincipalSigner } from '../src/use-cases/principal-signer.js';

t.test('the gateway signer makes the same assertion as the platform signer', async (t) => {
  const verify = createPrincipalVerifier(testEnv.internalSecret);
  const fast = createFastPrincipalSigner(testEnv.internalSecret);
  const { clientIp: _ip, userAgent: _ua, requestId: _id, ...fixed } = testPrincipal('agent');
  const calls = [
    { clientIp: '203.0.113.7', userAgent: 'curl/8', requestId: 'req-1' },
    { clientIp: null, userAgent: null, requestId: 'req-2' },
    { clientIp: '::1', userAgent: 'evil "quoted" \\ agent\n\u2028 ünïcode', requestId: 'req-3' },
  ];
  for (const call of calls) {
    const fastToken = fast(fixed, call);
    const platformToken = await createPrincipalSigner(testEnv.internalSecret)({ ...fixed, ...call });
    t.same(
      await verify(fastToken),
      { ...fixed, ...call },
      `verifies as the full principal (${call.requestId})`,
    );
    t.same(decodeProtectedHeader(fastToken), decodeProtectedHeader(platformToken), 'same header');
    const a = decodeJwt(fastToken);
    const b = decodeJwt(platformToken);
    t.same({ ...a, iat: 0, exp: 0 }, { ...b, iat: 0, exp: 0 }, 'same claims');
    t.equal((a.exp as number) - (a.iat as number), 60, 'lives 60 s');
  }
  await t.rejects(verify(`${fast(fixed, calls[0])}x`), 'a tampered signature is refused');
  const other = createFastPrincipalSigner('another-secret-of-enough-length-0123456789');
  await t.rejects(verify(other(fixed, calls[0])), 'another secret is refused');
});
