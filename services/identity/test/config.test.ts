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

t.test('production refuses a plain http issuer, except on loopback', async (t) => {
  const env = {
    PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys,
    NODE_ENV: 'production',
    OAUTH_SIGNING_KEYS: JSON.stringify([{ kty: 'EC', crv: 'P-256', kid: 'k1' }]),
  };
  for (const issuer of ['http://support.example.com', 'http://10.0.0.5:8080', 'http://0.0.0.0:8080'])
    t.throws(() => loadIdentityServiceConfig({ ...env, OAUTH_ISSUER: issuer }), {
      name: 'ConfigError',
      message: /OAUTH_ISSUER must be an https:\/\/ origin in production/,
    });
  for (const issuer of [
    'https://support.example.com',
    'http://127.0.0.1:8080',
    'http://localhost:8080',
    'http://[::1]:8080',
  ])
    t.equal(loadIdentityServiceConfig({ ...env, OAUTH_ISSUER: issuer }).OAUTH_ISSUER, issuer, issuer);
  t.ok(
    loadIdentityServiceConfig({ ...env, NODE_ENV: 'development', OAUTH_ISSUER: 'http://desk.lan:8080' }),
    'development may use any http origin',
  );
});
