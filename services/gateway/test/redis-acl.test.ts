import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startPrivateRedis, testLogger, uniqueName } from '@support-desk/platform/testing';
import t from 'tap';
import { parse } from 'yaml';
import { createDenyList } from '../src/store/deny-list.js';
import { createIdempotencyStore } from '../src/store/idempotency-store.js';
import { bearer, harness, testRedis } from './helpers.js';

const COMPOSE = fileURLToPath(new URL('../../../../docker-compose.yml', import.meta.url));
const K8S_EXAMPLE = fileURLToPath(
  new URL('../../../../deploy/helm/examples/redis-values.yaml', import.meta.url),
);
const PASSWORD = 'acl-test-password';

/** The shipped Redis command's arguments (after `redis-server`), with a test password. */
function shippedRedisArgs(): string[] {
  const command = parse(readFileSync(COMPOSE, 'utf8')).services.redis.command as string[];
  return command.slice(1).map((arg) => (arg.startsWith('>${') ? `>${PASSWORD}` : arg));
}

/** The rules the compose command gives the gateway user (after its password). */
const composeGatewayRules = () => {
  const args = shippedRedisArgs();
  return args.slice(args.indexOf(`>${PASSWORD}`) + 1);
};

/**
 * The Kubernetes example's gateway user (deploy/helm/examples/redis-values.yaml), as the chart
 * writes it into its ACL file: `user <name> <enabled> <password> <keys> <channels> <commands>`
 * (as arguments here, which redis-server reads the same way).
 */
function exampleRedisArgs(): string[] {
  const { users } = parse(readFileSync(K8S_EXAMPLE, 'utf8')).auth.acl;
  const gateway = users.find((u: { username: string }) => u.username === 'gateway');
  const rules = [gateway.keys, gateway.channels, gateway.commands].flatMap((r: string) =>
    r.trim().split(/\s+/),
  );
  // The chart keeps `default` on with the admin password (its probes use it), all rights.
  const admin = ['--user', 'default', 'on', '>admin-password', '~*', '&*', '+@all'];
  return [...admin, '--user', 'gateway', gateway.enabled, `>${PASSWORD}`, ...rules];
}

t.test('the Kubernetes example gives the gateway user the same rules as compose', async (t) => {
  const example = exampleRedisArgs();
  t.same(example.slice(example.indexOf(`>${PASSWORD}`) + 1), composeGatewayRules());
});

for (const [where, redisArgs] of [
  ['compose', shippedRedisArgs],
  ['Kubernetes example', exampleRedisArgs],
] as const)
  t.test(
    `the shipped Redis ACL (${where}): the gateway works as its user, and that user can do nothing else`,
    async (t) => {
      const redis = await startPrivateRedis(t, { extraArgs: redisArgs() });
      const asGateway = `redis://gateway:${PASSWORD}@127.0.0.1:${redis.port}`;
      // The prefixes keep the defaults' shape (sd:rl:, sd:gw:), which the ACL's key patterns name.
      const h = await harness(t, {
        RATE_LIMIT_PREFIX: `sd:rl:${uniqueName()}:`,
        REDIS_KEY_PREFIX: `sd:gw:${uniqueName()}:`,
      });
      const gateway = await h.gateway({}, asGateway);
      const admin = h.identity.addUser('admin');
      const { raw } = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: 2, events: 2 } });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(
          (await gateway.app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) })).statusCode,
        );
      }
      t.same(statuses, [200, 200, 429], 'rate limiting runs through the gateway user');
      t.equal(gateway.rateLimiterStats?.failOpen, 0, 'no call was let through for want of Redis');

      const client = testRedis(t, asGateway);
      await client.connect();
      const newDenyList = () =>
        createDenyList({
          redis: client,
          prefix: h.config.REDIS_KEY_PREFIX,
          ttlSeconds: 60,
          leewaySeconds: 0,
          cacheTtlMs: 0,
          logger: testLogger(),
        });
      const denyList = newDenyList();
      await denyList.deny('usr_x', new Date().toISOString());
      await denyList.denyGrant('gnt_x', new Date().toISOString());
      const fresh = newDenyList();
      t.equal(await fresh.isDenied('usr_x'), 'user', 'the deny list writes and reads as the gateway user');
      t.equal(await fresh.isDenied('usr_y', 'gnt_x'), 'grant');

      // Idempotency-Key: claim (SET NX PX GET), store (a script: GET, SET EX), release (GET, DEL).
      const store = createIdempotencyStore({
        redis: client,
        prefix: h.config.REDIS_KEY_PREFIX,
        ttlSeconds: 60,
        inFlightMs: 60_000,
      });
      const claimed = await store.claim('key:k1', 'idem-1', 'fp');
      if (claimed.kind !== 'claimed') throw new Error('not claimed');
      const answer = {
        status: 201,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{}'),
      };
      t.ok(await store.complete('key:k1', 'idem-1', claimed.claim, answer), 'an answer is stored');
      t.match(await store.claim('key:k1', 'idem-1', 'fp'), { kind: 'done', answer: { status: 201 } });
      const second = await store.claim('key:k1', 'idem-2', 'fp');
      if (second.kind !== 'claimed') throw new Error('not claimed');
      await store.release('key:k1', 'idem-2', second.claim);
      t.equal((await store.claim('key:k1', 'idem-2', 'fp')).kind, 'claimed', 'a released claim is gone');

      await t.rejects(client.set('other:key', '1'), /NOPERM/, 'no key outside its prefixes');
      await t.rejects(client.flushall(), /NOPERM/, 'no dangerous command');
      await t.rejects(client.call('CONFIG', 'GET', '*'), /NOPERM/, 'no configuration');
      t.match(
        await rawCommand(redis.port, 'GET sd:gw:anything'),
        /^-NOAUTH/,
        'no command without a password (compose: the default user is off)',
      );
    },
  );

/** One inline command on a fresh connection, without authenticating: the first reply line. */
function rawCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    const timer = setTimeout(() => socket.destroy(new Error('no answer')), 5000);
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(data.split('\r\n')[0]);
      }
    });
    socket.on('error', reject);
    socket.connect(port, '127.0.0.1', () => socket.write(`${command}\r\n`));
  });
}
