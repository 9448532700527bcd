import { Type } from 'typebox';
import t from 'tap';
import { baseConfig, configSchema, loadConfig, principalConfig } from '../src/subpaths/core.js';
import { testPrincipalKeys } from '../src/testing/index.js';

const schema = configSchema({
  ...baseConfig,
  ...principalConfig,
  PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 8081 }),
});

const { verifyKeys } = testPrincipalKeys();
const env = (vars: Record<string, string>) => ({ PRINCIPAL_VERIFY_KEYS: verifyKeys, ...vars });

t.test('defaults apply and numbers are converted', async (t) => {
  const c = loadConfig(schema, env({ PORT: '9000' }));
  t.equal(c.PORT, 9000);
  t.equal(c.MONGO_URL, 'mongodb://127.0.0.1:27027');
  t.equal(c.LOG_LEVEL, 'info');
  t.equal(loadConfig(schema, env({})).PORT, 8081);
  t.equal(loadConfig(schema, env({ PORT: '' })).PORT, 8081, 'an empty variable counts as unset');
});

t.test('a bad variable fails fast with its name', async (t) => {
  t.throws(() => loadConfig(schema, env({ PORT: 'eighty' })), { name: 'ConfigError', message: /PORT/ });
  t.throws(() => loadConfig(schema, env({ PORT: '70000' })), { message: /PORT.*70000/ });
  t.throws(() => loadConfig(schema, env({ MONGO_URL: 'postgres://x' })), { message: /MONGO_URL/ });
  t.throws(() => loadConfig(schema, env({ LOG_LEVEL: 'loud' })), { message: /LOG_LEVEL/ });
  t.throws(() => loadConfig(schema, env({ PRINCIPAL_VERIFY_KEYS: 'short' })), {
    message: /PRINCIPAL_VERIFY_KEYS/,
  });
});

t.test('a rejected value is shown only when it cannot be a secret', async (t) => {
  const message = (vars: Record<string, string>) => {
    try {
      loadConfig(schema, env(vars));
    } catch (err) {
      return (err as Error).message;
    }
    return '';
  };
  t.match(message({ PORT: '70000' }), /got "?70000/, 'a number is shown');
  t.equal(
    message({ PORT: 'eighty' }),
    'Invalid configuration: PORT Expected integer (got "eighty")',
    'the problem worded as it always was',
  );
  t.match(message({ LOG_LEVEL: 'loud' }), /got "?loud/, 'a word of a fixed set is shown');
  const secret = message({ PRINCIPAL_VERIFY_KEYS: 'hunter2' });
  t.match(secret, /PRINCIPAL_VERIFY_KEYS.*not shown/);
  t.notMatch(secret, /hunter2/, 'a short secret is never echoed');
  const url = message({ MONGO_URL: 'postgres://admin:s3cret@db.example:5432/x' });
  t.match(url, /MONGO_URL/);
  t.notMatch(url, /s3cret/, 'a URL with a password is never echoed');
});

t.test('there is no default principal key, in any environment', async (t) => {
  for (const NODE_ENV of ['development', 'test', 'production']) {
    t.throws(() => loadConfig(schema, { NODE_ENV }), {
      name: 'ConfigError',
      message: /PRINCIPAL_VERIFY_KEYS.*missing/,
    });
  }
  t.equal(loadConfig(schema, env({ NODE_ENV: 'production' })).PRINCIPAL_VERIFY_KEYS, verifyKeys);
});
