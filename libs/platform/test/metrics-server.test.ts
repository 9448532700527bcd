// GET /metrics negotiates its format: OpenMetrics (with exemplars) for a scraper that asks for it,
// the Prometheus text format otherwise, and scrapes of both at once never see each other's names.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import {
  acceptsOpenMetrics,
  counter,
  observeInTrace,
  startMetricsServer,
  tracedHistogram,
} from '../src/subpaths/metrics.js';
import { testLogger } from '../src/testing/index.js';

const OPENMETRICS = 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5';

t.test('OpenMetrics with exemplars when asked, the text format otherwise, at once', async (t) => {
  const server = await startMetricsServer({ host: '127.0.0.1', port: 0, logger: testLogger('metrics') });
  t.teardown(() => server.close());
  const traced = tracedHistogram('test_traced_seconds', 'a traced histogram', ['kind']);
  const calls = counter('test_calls_total', 'a counter', ['kind']);
  const traceId = randomBytes(16).toString('hex');
  observeInTrace(traced, { kind: 'a' }, 0.003, traceId);
  observeInTrace(traced, { kind: 'b' }, 0.003, undefined);
  calls.inc({ kind: 'a' });

  const scrape = async (accept?: string) => {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`, { headers: accept ? { accept } : {} });
    return { type: res.headers.get('content-type') ?? '', text: await res.text() };
  };
  // Interleaved on purpose: an OpenMetrics rendering renames counters while it runs.
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) => scrape(i % 2 === 0 ? OPENMETRICS : undefined)),
  );
  for (const [i, { type, text }] of answers.entries()) {
    if (i % 2 === 0) {
      t.match(type, /^application\/openmetrics-text; version=1\.0\.0/);
      t.match(text, /# TYPE test_calls counter\ntest_calls_total\{kind="a"\} 1\n/);
      t.match(
        text,
        new RegExp(
          `test_traced_seconds_bucket\\{le="0\\.005",kind="a"\\} 1 # \\{trace_id="${traceId}"\\} 0\\.003 `,
        ),
        'the bucket names the trace of its latest observation',
      );
      t.match(text, /test_traced_seconds_bucket\{le="0\.005",kind="b"\} 1\n/, 'no trace, no exemplar');
      t.match(text, /\n# EOF\n$/);
    } else {
      t.match(type, /^text\/plain; version=0\.0\.4/);
      t.match(text, /# TYPE test_calls_total counter\ntest_calls_total\{kind="a"\} 1\n/);
      t.notMatch(text, /# \{trace_id=/);
    }
  }
});

t.test('which Accept headers take OpenMetrics', async (t) => {
  t.ok(acceptsOpenMetrics(OPENMETRICS), "Prometheus's");
  t.ok(acceptsOpenMetrics('application/openmetrics-text; version=0.0.1; q=0.75, */*;q=0.1'));
  t.notOk(acceptsOpenMetrics(undefined), 'none: the text format');
  t.notOk(acceptsOpenMetrics('text/plain;version=0.0.4'));
  t.notOk(acceptsOpenMetrics('application/openmetrics-text;q=0, text/plain'), 'refused with q=0');
});
