// deploy/observability against the real thing: promtool checks and unit-tests the rules, then
// Debian's Prometheus scrapes every service of a stack (METRICS_PORT), evaluates the rules, and
// its HTTP API shows the key series exist and move after traffic, and that every query of the
// Grafana dashboard is valid PromQL.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { cast } from '../src/actors.js';
import { request } from '../src/http.js';
import { eventually, freePort, ROOT, startStack } from '../src/stack.js';
import { createRequest } from '../src/world.js';

const OBSERVABILITY = path.join(ROOT, 'deploy/observability');
const RULES = path.join(OBSERVABILITY, 'prometheus/rules.yaml');
const PROMTOOL = '/usr/bin/promtool';
const PROMETHEUS = '/usr/bin/prometheus';

if (!fs.existsSync(PROMTOOL) || !fs.existsSync(PROMETHEUS)) {
  t.fail('Prometheus is not installed (apt-get install prometheus; npm test installs it as root)');
  t.end();
} else {
  t.test('promtool: the rules are valid and their unit tests pass', async (t) => {
    const check = spawnSync(PROMTOOL, ['check', 'rules', RULES], { encoding: 'utf8' });
    t.equal(check.status, 0, check.stdout + check.stderr);
    const unit = spawnSync(PROMTOOL, ['test', 'rules', 'rules.test.yaml'], {
      cwd: path.dirname(RULES),
      encoding: 'utf8',
    });
    t.equal(unit.status, 0, unit.stdout + unit.stderr);
    t.match(unit.stdout, /SUCCESS/);
  });

  const stack = await startStack(t);
  const { agent } = await cast(stack);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-prometheus-'));
  const port = await freePort();
  const jobs = ['gateway', 'requests', 'identity', 'audit', 'webhooks'];
  const config = [
    'global: { scrape_interval: 1s, evaluation_interval: 1s }',
    `rule_files: [${JSON.stringify(RULES)}]`,
    'scrape_configs:',
    ...jobs.map(
      (job) =>
        `  - job_name: ${job}\n    static_configs: [{ targets: [${JSON.stringify(new URL(stack.metricsOrigins[job]).host)}] }]`,
    ),
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), `${config}\n`);
  const log = fs.openSync(path.join(dir, 'prometheus.log'), 'w');
  const prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  t.teardown(async () => {
    const exited = new Promise((r) => prometheus.once('exit', r));
    prometheus.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    prometheus.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const api = `http://127.0.0.1:${port}/api/v1`;
  const query = async (expr: string): Promise<{ status: string; value: number | null; error?: string }> => {
    const res = await request(`${api}/query?query=${encodeURIComponent(expr)}`);
    const result = res.json?.data?.result as { value: [number, string] }[] | undefined;
    return {
      status: res.json?.status,
      value: result?.length ? result.reduce((sum, r) => sum + Number(r.value[1]), 0) : null,
      error: res.json?.error,
    };
  };
  const logTail = () => fs.readFileSync(path.join(dir, 'prometheus.log'), 'utf8').slice(-2000);

  t.test('Prometheus scrapes every service', async (t) => {
    await eventually(
      async () => (await request(`http://127.0.0.1:${port}/-/ready`).catch(() => null))?.status === 200,
      { what: `Prometheus ready\n${logTail()}`, timeoutMs: 30_000 },
    );
    await eventually(async () => (await query(`sum(up{job=~"${jobs.join('|')}"})`)).value === jobs.length, {
      what: 'all five services up',
      timeoutMs: 30_000,
    });
    t.pass('gateway, requests, identity, audit and webhooks are up');
  });

  const KEYS_RESOLVED = 'sum(identity_api_keys_resolved_total{job="identity",outcome="valid"})';
  t.test('the key series exist and move after traffic', async (t) => {
    const before = {
      gateway: (await query('sum(http_server_request_duration_seconds_count{job="gateway"})')).value ?? 0,
      published: (await query('sum(outbox_published_total{job="requests"})')).value ?? 0,
      acked: (await query('sum(consumer_messages_total{job="audit",outcome="acked"})')).value ?? 0,
      keys: (await query(KEYS_RESOLVED)).value ?? 0,
    };
    for (let i = 0; i < 5; i++) {
      const created = await createRequest(t, agent.api, { title: `scraped ${i}` });
      t.equal((await agent.api.get(`/v1/requests/${created.id}`)).status, 200);
    }
    await eventually(
      async () => {
        const gateway =
          (await query('sum(http_server_request_duration_seconds_count{job="gateway"})')).value ?? 0;
        const published = (await query('sum(outbox_published_total{job="requests"})')).value ?? 0;
        const acked = (await query('sum(consumer_messages_total{job="audit",outcome="acked"})')).value ?? 0;
        // The file's own agent key was resolved once, by its first call: scraped once identity's
        // next scrape after it succeeded (the series appears only then).
        const keys = (await query(KEYS_RESOLVED)).value ?? 0;
        return (
          gateway >= before.gateway + 10 &&
          published >= before.published + 5 &&
          acked >= before.acked + 5 &&
          keys >= before.keys + 1
        );
      },
      { what: 'gateway calls, outbox publishes, audit acks and key resolutions to rise', timeoutMs: 30_000 },
    );
    for (const series of [
      'gateway_authentications_total{outcome="ok"}',
      'gateway_rate_limit_decisions_total{decision="admitted"}',
      'consumer_pending_messages{consumer="audit"}',
      'outbox_oldest_entry_age_seconds',
      'process_resident_memory_bytes{job="audit"}',
      // The HTTP labels of the OpenTelemetry semantic conventions, which the rules and panels read.
      'http_server_request_duration_seconds_count{job="gateway",http_request_method="POST",http_route="/v1/requests",http_response_status_code="201"}',
      'http_server_request_duration_seconds_bucket{job="requests",http_request_method="GET",http_route="/v1/requests/:id",http_response_status_code="200",le="0.25"}',
      'webhook_deliveries_pending{job="webhooks"}',
      'gateway_upstream_answers_total{job="gateway",service="requests",http_response_status_code="200"}',
      'identity_ldap_syncs_total{job="identity"}',
      'identity_scim_requests_total{job="identity"}',
      'identity_signing_key_errors_total{job="identity"}',
      'webhook_oldest_pending_delivery_age_seconds{job="webhooks"}',
      'webhook_subscriptions_disabled{job="webhooks"}',
    ]) {
      t.not((await query(series)).value, null, `${series} exists`);
    }
  });

  t.test('the rules load and evaluate', async (t) => {
    await eventually(
      async () => {
        const res = await request(`${api}/rules`);
        const groups = (res.json?.data?.groups ?? []) as { rules: { health: string }[] }[];
        const rules = groups.flatMap((g) => g.rules);
        return rules.length === 27 && rules.every((r) => r.health === 'ok');
      },
      { what: 'all 27 rules evaluated without error', timeoutMs: 30_000 },
    );
    // A recording rule writes its series at its next evaluation after two scrapes: poll, bounded.
    const ratio = await eventually(
      async () => (await query('sd:gateway_errors:ratio_rate5m')).value !== null,
      {
        what: 'the SLO ratio recorded',
        timeoutMs: 30_000,
      },
    );
    t.ok(ratio, 'the SLO ratio is recorded');
  });

  // `helm test`'s script (deploy/helm/support-desk-service/files/chart-test.mjs), run as the
  // chart's test pod runs it, against real services: it must pass on a healthy release.
  t.test("the chart's helm test passes against the gateway and a service", async (t) => {
    const script = fs.readFileSync(
      path.join(ROOT, 'deploy/helm/support-desk-service/files/chart-test.mjs'),
      'utf8',
    );
    for (const [service, url] of [
      ['gateway', stack.origin],
      ['requests', `http://127.0.0.1:${stack.ports.requests}`],
    ]) {
      const run = spawnSync(
        process.execPath,
        ['--disable-proto=throw', '--input-type=module', '--eval', script],
        { env: { ...process.env, TARGET_URL: url, SERVICE: service }, encoding: 'utf8', timeout: 60_000 },
      );
      t.equal(run.status, 0, `${service}: ${run.stdout}${run.stderr}`);
      if (service === 'gateway') t.match(run.stdout, /\/v1\/me without credentials: 401 UNAUTHORIZED/);
    }
  });

  t.test('every dashboard query is valid PromQL', async (t) => {
    const dashboard = JSON.parse(
      fs.readFileSync(path.join(OBSERVABILITY, 'grafana/support-desk.json'), 'utf8'),
    ) as {
      panels: { title: string; targets: { expr: string }[] }[];
      templating: { list: { name: string; allValue?: string; query?: { query: string } }[] };
    };
    t.ok(dashboard.panels.length >= 10);
    // The service picker offers every scraped service, and "All" means all of them.
    const service = dashboard.templating.list.find((v) => v.name === 'service');
    t.same(service?.allValue?.split('|'), jobs, 'the service variable: All is every service');
    t.match(service?.query?.query, `job=~"${jobs.join('|')}"`, 'the service variable lists every service');
    // Two installs in one Prometheus (or one Thanos/Mimir) must not mix: every series a panel
    // reads is filtered by the cluster and namespace pickers, whose "All" also matches a series
    // without the label (this stack's Prometheus adds neither).
    for (const name of ['cluster', 'namespace'])
      t.equal(dashboard.templating.list.find((v) => v.name === name)?.allValue, '.*', `a ${name} variable`);
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const selectors = target.expr.match(/\{[^}]*\}/g) ?? [];
        t.ok(
          selectors.length > 0 &&
            selectors.every(
              (s) => s.includes('cluster=~"$cluster"') && s.includes('namespace=~"$namespace"'),
            ) &&
            !/[\w:]\[/.test(target.expr),
          `${panel.title}: every selector filters by cluster and namespace`,
        );
        const expr = target.expr
          .replaceAll('$service', jobs.join('|'))
          .replaceAll('$cluster', '.*')
          .replaceAll('$namespace', '.*')
          .replaceAll('$__rate_interval', '1m');
        const r = await query(expr);
        t.equal(r.status, 'success', `${panel.title}: ${r.error ?? 'ok'}`);
        if (panel.title === 'Scrape up')
          t.not(r.value, null, '"All" still finds series without cluster and namespace labels');
      }
    }
  });
}
