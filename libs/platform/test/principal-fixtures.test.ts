// Services as readers of principal assertions from other gateway releases
// (libs/contracts/test/fixtures/principal.json): the claims of every version, stamped and signed
// here with a test key, are accepted, and the fields a service reads come through.
import { fixtures } from '@support-desk/contracts/fixtures';
import t from 'tap';
import { createPrincipalVerifier, principalSigningKey, signClaims } from '../src/subpaths/core.js';
import { testPrincipalKeys } from '../src/testing/index.js';

t.test('principal assertions of every version are accepted', async (t) => {
  const keys = testPrincipalKeys();
  const key = principalSigningKey(keys.signingKey);
  const verify = createPrincipalVerifier(keys.verifyKeys, 'requests');
  const all = fixtures.principal();
  for (const [version, claims] of Object.entries(all)) {
    const iat = Math.floor(Date.now() / 1000);
    const token = signClaims(key, JSON.stringify({ ...claims, iat, exp: iat + 10 }));
    const call = { method: String(claims.htm), url: String(claims.htu) };
    const p = claims.p as { userId: string; scopes: string[] };
    const principal = await verify(token, call);
    t.match(principal, { userId: p.userId, scopes: p.scopes }, `${version}: accepted, read`);
    await t.rejects(
      verify(token, { ...call, url: '/v1/requests' }),
      { code: 'UNAUTHORIZED', statusCode: 401 },
      `${version}: still bound to its call`,
    );
  }
  t.equal(all.future.v, 2, 'the future example carries a newer version');
  t.ok('tenantId' in (all.future.p as object), 'and principal fields this release does not know');
});
