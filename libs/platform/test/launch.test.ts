import { ferretdbArgs, pgQuery, PostgresError, storeBackend } from '@support-desk/platform/launch';
import t from 'tap';
import { chromiumLaunchOptions, sharedPostgres } from '@support-desk/platform/testing';

t.test('SD_STORE names FerretDB backend, and nothing else', async (t) => {
  t.equal(storeBackend(undefined), 'postgresql', 'the default');
  t.equal(storeBackend(''), 'postgresql', 'empty is unset');
  t.equal(storeBackend('sqlite'), 'sqlite');
  t.throws(() => storeBackend('mysql'), /SD_STORE=mysql is not a store backend: use postgresql .* or sqlite/);
});

t.test('FerretDB runs on PostgreSQL when given its URL, else on SQLite in its directory', async (t) => {
  const place = { host: '127.0.0.1', port: 27100, dir: '/tmp/x' };
  const pg = ferretdbArgs({ ...place, postgresqlUrl: 'postgres://ferretdb@127.0.0.1:5433/ferretdb' });
  t.ok(pg.includes('--handler=postgresql'));
  t.ok(pg.includes('--postgresql-url=postgres://ferretdb@127.0.0.1:5433/ferretdb'));
  t.notOk(pg.some((a) => a.startsWith('--sqlite-url')));
  t.notOk(
    pg.some((a) => a.includes('nested-pushdown')),
    'nested pushdown stays off: it misses dotted paths through arrays',
  );
  const sqlite = ferretdbArgs(place);
  t.ok(sqlite.includes('--handler=sqlite'));
  t.ok(sqlite.includes('--sqlite-url=file:/tmp/x/'));
});

const shared = sharedPostgres();
t.test(
  'pgQuery speaks to the shared PostgreSQL',
  { skip: shared ? false : 'the store is not FerretDB on PostgreSQL' },
  async (t) => {
    const place = shared!;
    t.same(await pgQuery(place, "SELECT 1, NULL, 'two words'"), [['1', null, 'two words']], 'rows as text');
    t.same(
      await pgQuery(place, 'SELECT 1; SELECT x FROM (VALUES (2), (3)) AS v(x)'),
      [['2'], ['3']],
      'the last result of several statements',
    );
    const err = await pgQuery(place, 'SELECT 1/0').catch((e: unknown) => e);
    t.ok(err instanceof PostgresError);
    t.equal((err as PostgresError).code, '22012', 'the SQLSTATE');
    const missing = await pgQuery({ ...place, database: 'no_such_database' }, 'SELECT 1').catch(
      (e: unknown) => e,
    );
    t.match((missing as Error).message, /database "no_such_database" does not exist/);
    const events = await pgQuery(
      place,
      "SELECT evtname FROM pg_event_trigger WHERE evtname = 'sd_ferretdb_gin'",
    );
    t.same(events, [['sd_ferretdb_gin']], "FerretDB's database has the GIN index trigger");
  },
);

t.test(
  'driving Chromium: Playwright may set a function prototype; everything else keeps __proto__ off',
  async (t) => {
    const proto = (() => undefined) as unknown as Record<string, unknown>;
    const builder = () => undefined;
    t.throws(() => {
      (builder as unknown as { __proto__: unknown }).__proto__ = proto;
    }, 'before: the flag refuses it (what crashed a failed browser step)');
    chromiumLaunchOptions();
    (builder as unknown as { __proto__: unknown }).__proto__ = proto;
    t.equal(Object.getPrototypeOf(builder), proto, "after: colors' chaining works");
    t.throws(() => (builder as unknown as { __proto__: unknown }).__proto__, 'reading it still throws');
    t.throws(() => {
      (builder as unknown as { __proto__: unknown }).__proto__ = { polluted: 'yes' };
    }, 'a function still cannot take an object (data) as prototype');
    const data = JSON.parse('{}') as { __proto__: unknown };
    t.throws(() => {
      data.__proto__ = { polluted: 'yes' };
    }, 'nor can a plain object');
    t.equal(({} as Record<string, unknown>).polluted, undefined);
  },
);

t.test('a stack of replicas: names, ports, what the gateway reaches and who holds which key', async (t) => {
  const { SERVICES, stackInstances, stackEnvironment, instanceEnvironment } =
    await import('@support-desk/platform/launch/stack');
  const instances = await stackInstances(SERVICES, 2, (service, k) => ({
    port: service.port + 10 * k,
    metricsPort: service.metricsPort + 10 * k,
  }));
  t.same(
    instances.map((i) => `${i.name}:${i.port}`),
    [
      'identity:8082',
      'identity#2:8092',
      'requests:8081',
      'requests#2:8091',
      'audit:8083',
      'audit#2:8093',
      'webhooks:8084',
      'webhooks#2:8094',
      'gateway:8080',
      'gateway#2:8090',
    ],
  );
  const env = stackEnvironment(instances);
  t.equal(env.REQUESTS_URL, 'http://127.0.0.1:8081,http://127.0.0.1:8091', 'every replica, for the gateway');
  t.equal(env.GATEWAY_PORT, '8080');
  t.equal(env.GATEWAY_URL, undefined);
  t.equal(env.STORE_WRITE_LOCKS, 'true', 'several writers of one aggregate on the local store');
  t.equal(stackEnvironment(instances.filter((i) => !i.name.includes('#'))).STORE_WRITE_LOCKS, undefined);
  const keys = { signingKey: 'private', verifyKeys: 'public' };
  const gateway2 = instanceEnvironment(
    instances.find((i) => i.name === 'gateway#2')!,
    keys,
  );
  t.match(gateway2, {
    PORT: '8090',
    GATEWAY_PORT: '8090',
    METRICS_PORT: '9490',
    PRINCIPAL_SIGNING_KEY: 'private',
  });
  t.notOk('PRINCIPAL_VERIFY_KEYS' in gateway2);
  const audit = instanceEnvironment(
    instances.find((i) => i.name === 'audit')!,
    keys,
  );
  t.match(audit, { PORT: '8083', AUDIT_PORT: '8083', PRINCIPAL_VERIFY_KEYS: 'public' });
  t.notOk('PRINCIPAL_SIGNING_KEY' in audit, 'only the gateway holds the private key');
});
