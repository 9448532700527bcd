import { Type } from '@sinclair/typebox';
import t from 'tap';
import { baseConfig, ConfigError, configSchema, loadConfig } from '../src/index.js';

const schema = configSchema({
  ...baseConfig,
  PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 8081 }),
});

t.test('defaults apply and numbers are converted', async (t) => {
  const c = loadConfig(schema, { PORT: '9000' });
  t.equal(c.PORT, 9000);
  t.equal(c.MONGO_URL, 'mongodb://127.0.0.1:27027');
  t.equal(c.LOG_LEVEL, 'info');
  t.equal(loadConfig(schema, {}).PORT, 8081);
  t.equal(loadConfig(schema, { PORT: '' }).PORT, 8081, 'an empty variable counts as unset');
});

t.test('a bad variable fails fast with its name', async (t) => {
  t.throws(() => loadConfig(schema, { PORT: 'eighty' }), { name: 'ConfigError', message: /PORT/ });
  t.throws(() => loadConfig(schema, { PORT: '70000' }), { message: /PORT.*70000/ });
  t.throws(() => loadConfig(schema, { MONGO_URL: 'postgres://x' }), { message: /MONGO_URL/ });
  t.throws(() => loadConfig(schema, { LOG_LEVEL: 'loud' }), { message: /LOG_LEVEL/ });
  t.throws(() => loadConfig(schema, { INTERNAL_AUTH_SECRET: 'short' }), { message: /INTERNAL_AUTH_SECRET/ });
});

t.test('a rejected value is shown only when it cannot be a secret', async (t) => {
  const message = (env: Record<string, string>) => {
    try {
      loadConfig(schema, env);
    } catch (err) {
      return (err as Error).message;
    }
    return '';
  };
  t.match(message({ PORT: '70000' }), /got "?70000/, 'a number is shown');
  t.match(message({ LOG_LEVEL: 'loud' }), /got "?loud/, 'a word of a fixed set is shown');
  const secret = message({ INTERNAL_AUTH_SECRET: 'hunter2' });
  t.match(secret, /INTERNAL_AUTH_SECRET.*not shown/);
  t.notMatch(secret, /hunter2/, 'a short secret is never echoed');
  const url = message({ MONGO_URL: 'postgres://admin:s3cret@db.example:5432/x' });
  t.match(url, /MONGO_URL/);
  t.notMatch(url, /s3cret/, 'a URL with a password is never echoed');
});

t.test('production refuses the development internal secret', async (t) => {
  t.throws(() => loadConfig(schema, { NODE_ENV: 'production' }), ConfigError);
  const c = loadConfig(schema, { NODE_ENV: 'production', INTERNAL_AUTH_SECRET: 'x'.repeat(40) });
  t.equal(c.NODE_ENV, 'production');
});
