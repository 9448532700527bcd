import { testEnv } from '@support-desk/platform/testing';
import t from 'tap';
import { loadIdentityServiceConfig } from '../src/config.js';

t.test('production needs OAUTH_SIGNING_KEYS; development generates a key file', async (t) => {
  const env = { PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys };
  t.throws(() => loadIdentityServiceConfig({ ...env, NODE_ENV: 'production' }), {
    name: 'ConfigError',
    message: /OAUTH_SIGNING_KEYS must be set in production/,
  });
  const keys = JSON.stringify([{ kty: 'EC', crv: 'P-256', kid: 'k1' }]);
  t.equal(
    loadIdentityServiceConfig({ ...env, NODE_ENV: 'production', OAUTH_SIGNING_KEYS: keys })
      .OAUTH_SIGNING_KEYS,
    keys,
  );
  for (const NODE_ENV of ['development', 'test'])
    t.notOk(
      loadIdentityServiceConfig({ ...env, NODE_ENV }).OAUTH_SIGNING_KEYS,
      `${NODE_ENV}: no keys needed`,
    );
});
