import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { testEnv } from '@support-desk/platform/testing';
import t from 'tap';
import { parse } from 'yaml';
import { loadGatewayConfig } from '../src/config.js';

const COMPOSE = fileURLToPath(new URL('../../../../docker-compose.yml', import.meta.url));
const env = { PRINCIPAL_SIGNING_KEY: testEnv.principalKeys.signingKey, NODE_ENV: 'production' };

t.test('production refuses a plain http public origin, except on loopback', async (t) => {
  for (const issuer of ['http://support.example.com', 'http://192.168.1.20:8080'])
    t.throws(() => loadGatewayConfig({ ...env, OAUTH_ISSUER: issuer }), {
      name: 'ConfigError',
      message: /OAUTH_ISSUER must be an https:\/\/ origin in production/,
    });
  for (const issuer of ['https://support.example.com', 'http://127.0.0.1:8080', 'http://localhost:8080'])
    t.equal(loadGatewayConfig({ ...env, OAUTH_ISSUER: issuer }).OAUTH_ISSUER, issuer, issuer);
});

/** `${NAME:-default}` → default (what compose uses when the variable is unset). */
const withDefaults = (value: string) => value.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');

t.test('compose publishes the gateway on loopback only, with a loopback issuer, by default', async (t) => {
  const services = parse(readFileSync(COMPOSE, 'utf8')).services as Record<
    string,
    { ports?: string[]; environment?: Record<string, string> }
  >;
  const published = Object.entries(services).filter(([, s]) => s.ports?.length);
  t.same(
    published.map(([name]) => name),
    ['gateway'],
    'only the gateway is published',
  );
  for (const port of services.gateway.ports!) {
    t.match(
      withDefaults(port),
      /^127\.0\.0\.1:\d+:8080$/,
      `${port}: bound to 127.0.0.1 unless set otherwise`,
    );
  }
  for (const name of ['gateway', 'identity']) {
    const issuer = withDefaults(services[name].environment?.OAUTH_ISSUER ?? '');
    t.equal(issuer, 'http://127.0.0.1:8080', `${name}: the issuer a loopback-published stack has`);
  }
  t.equal(
    loadGatewayConfig({ ...env, OAUTH_ISSUER: withDefaults(services.gateway.environment!.OAUTH_ISSUER) })
      .OAUTH_ISSUER,
    'http://127.0.0.1:8080',
    'which production accepts',
  );
});

t.test('REDIS_CLUSTER_NODES: host:port items, each port 1 to 65535', async (t) => {
  const nodes = '127.0.0.1:7001, redis-0.redis:6379,[::1]:7003';
  t.equal(loadGatewayConfig({ ...env, REDIS_CLUSTER_NODES: nodes }).REDIS_CLUSTER_NODES, nodes);
  t.equal(loadGatewayConfig(env).REDIS_CLUSTER_NODES, '', 'unset: one Redis at REDIS_URL');
  for (const bad of ['127.0.0.1', '127.0.0.1:0', 'a:70000', 'a:1,,b:2', 'redis://a:1'])
    t.throws(() => loadGatewayConfig({ ...env, REDIS_CLUSTER_NODES: bad }), {
      name: 'ConfigError',
      message: /REDIS_CLUSTER_NODES/,
    });
});
