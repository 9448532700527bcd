// One call's trace across the whole system, exported to a real OpenTelemetry Collector (built by
// scripts/test/otelcol.mjs, writing the spans it receives to a file): `POST /v1/requests` through
// the gateway with a caller's W3C `traceparent` yields one trace that spans the gateway, the
// requests service, its MongoDB calls, the outbox's NATS publish and audit's ingestion; the trace
// id is in the services' log lines and in the audit record's metadata.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { cast } from '../src/actors.js';
import { eventually, freePort, ROOT, startStack } from '../src/stack.js';

const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts/test/otelcol.mjs')], {
  encoding: 'utf8',
  timeout: 240_000,
});
const collectorBinary = build.stdout.trim().split('\n').pop() ?? '';
if (build.status !== 0 || !fs.existsSync(collectorBinary)) {
  t.fail(`the OpenTelemetry Collector could not be built: ${build.stderr}`);
  t.end();
} else {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-otelcol-'));
  const spansFile = path.join(dir, 'spans.jsonl');
  const port = await freePort();
  fs.writeFileSync(
    path.join(dir, 'config.yaml'),
    [
      'receivers:',
      '  otlp:',
      '    protocols:',
      `      http: { endpoint: "127.0.0.1:${port}" }`,
      'exporters:',
      `  file: { path: ${JSON.stringify(spansFile)}, flush_interval: 100ms }`,
      'service:',
      '  telemetry: { metrics: { level: none }, logs: { level: warn } }',
      '  pipelines:',
      '    traces: { receivers: [otlp], exporters: [file] }',
      '',
    ].join('\n'),
  );
  const log = fs.openSync(path.join(dir, 'collector.log'), 'w');
  const collector: ChildProcess = spawn(
    collectorBinary,
    ['--config', `file:${path.join(dir, 'config.yaml')}`],
    {
      stdio: ['ignore', log, log],
    },
  );
  fs.closeSync(log);
  t.teardown(() => {
    collector.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await eventually(
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }).catch(() => null);
      return res?.ok ? true : null;
    },
    { timeoutMs: 20_000, what: 'the collector to listen' },
  );

  const stack = await startStack(t, {
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      LOG_LEVEL: 'info', // the request lines
    },
  });
  const { admin, agent } = await cast(stack);

  interface Span {
    service: string;
    name: string;
    kind: number;
    spanId: string;
    parentSpanId: string;
    scope: string;
    attributes: Record<string, string>;
  }
  const SERVER = 2;
  const CLIENT = 3;
  const PRODUCER = 4;
  const CONSUMER = 5;
  const spansOfTrace = (traceId: string): Span[] => {
    const spans: Span[] = [];
    const text = fs.existsSync(spansFile) ? fs.readFileSync(spansFile, 'utf8') : '';
    // Whole lines only: the collector may be half way through writing the last one.
    for (const line of text.split('\n').slice(0, -1)) {
      for (const rs of JSON.parse(line).resourceSpans ?? []) {
        const service = (rs.resource?.attributes ?? []).find((a: { key: string }) => a.key === 'service.name')
          ?.value?.stringValue;
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            if (s.traceId === traceId)
              spans.push({
                service,
                name: s.name,
                kind: s.kind,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                scope: ss.scope?.name ?? '',
                attributes: Object.fromEntries(
                  (s.attributes ?? []).map((a: { key: string; value: { stringValue?: string } }) => [
                    a.key,
                    a.value?.stringValue ?? '',
                  ]),
                ),
              });
      }
    }
    return spans;
  };
  t.test('one POST /v1/requests is one trace: gateway → requests → NATS → audit', async (t) => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const res = await agent.api.post(
      '/v1/requests',
      { title: 'Traced printer', description: 'Follow this call everywhere.', priority: 'low' },
      { headers: { traceparent: `00-${traceId}-${callerSpan}-01` } },
    );
    t.equal(res.status, 201, res.text);
    const requestId = res.json.data.id as string;

    const spans = await eventually(
      async () => {
        const found = spansOfTrace(traceId);
        // Each process sends its spans on its own schedule (every 5 s): wait for every hop's.
        const has = (service: string, kind: number) =>
          found.some((s) => s.service === `support-desk-${service}` && s.kind === kind);
        const audited =
          has('gateway', SERVER) &&
          has('requests', SERVER) &&
          has('requests', PRODUCER) &&
          has('audit', CONSUMER);
        // A key resolved over NATS (a cache miss) is answered by identity in the same trace.
        const resolving = found.filter((s) => s.service === 'support-desk-gateway' && s.kind === CLIENT);
        const resolved = resolving.every((r) => found.some((s) => s.parentSpanId === r.spanId));
        return audited && resolved ? found : null;
      },
      { timeoutMs: 30_000, what: `every hop's spans in trace ${traceId}` },
    ).catch(() => spansOfTrace(traceId)); // the assertions below then say which hop is missing
    t.comment(`trace ${traceId}: ${spans.map((s) => `${s.service}/${s.scope}/${s.name}`).join(' | ')}`);
    const one = (what: string, match: (s: Span) => boolean) => {
      const found = spans.filter(match);
      t.ok(found.length > 0, `${what}: ${found.map((s) => s.name).join(', ') || 'none'}`);
      return found[0];
    };

    const gateway = one(
      'the gateway serves the call, a child of the caller',
      (s) => s.service === 'support-desk-gateway' && s.kind === SERVER && s.parentSpanId === callerSpan,
    );
    t.equal(gateway?.name, 'POST /v1/requests', 'the server span is named after the route template');
    one(
      'the gateway checks the rate limit in Redis',
      (s) => s.service === 'support-desk-gateway' && s.scope.includes('ioredis'),
    );
    for (const redis of spans.filter((s) => s.scope.includes('ioredis'))) {
      const statements = ['db.statement', 'db.query.text'].map((k) => redis.attributes[k]).filter(Boolean);
      t.ok(statements.length > 0, `${redis.name}: has a statement`);
      t.same(
        statements.filter((text) => text !== redis.name),
        [],
        `${redis.name}: the statement is the command only, never its keys (key ids, addresses)`,
      );
    }
    const proxied = one(
      'the gateway calls requests (undici), under its server span',
      (s) =>
        s.service === 'support-desk-gateway' &&
        s.scope.includes('undici') &&
        s.parentSpanId === gateway?.spanId,
    );
    const served = one(
      "requests serves the proxied call, a child of the gateway's client span",
      (s) => s.service === 'support-desk-requests' && s.kind === SERVER && s.parentSpanId === proxied?.spanId,
    );
    t.equal(served?.name, 'POST /v1/requests');
    one(
      'requests writes to MongoDB',
      (s) => s.service === 'support-desk-requests' && s.scope.includes('mongodb'),
    );
    const published = one(
      'the outbox publishes request.created to NATS in the same trace',
      (s) =>
        s.service === 'support-desk-requests' && s.kind === PRODUCER && s.name.endsWith('.request.created'),
    );
    one(
      'audit ingests it, a child of the publish',
      (s) =>
        s.service === 'support-desk-audit' && s.kind === CONSUMER && s.parentSpanId === published?.spanId,
    );
    for (const rpc of spans.filter(
      (s) => s.service === 'support-desk-gateway' && s.name.endsWith('.resolve'),
    ))
      one(
        `identity answers ${rpc.name} (NATS request) in the same trace`,
        (s) => s.service === 'support-desk-identity' && s.kind === SERVER && s.parentSpanId === rpc.spanId,
      );

    await t.test('the trace id is in the audit record and the log lines', async (t) => {
      const events = await eventually(
        async () => {
          const list = await admin.api.get(`/v1/requests/${requestId}/events`);
          return list.status === 200 && list.json.data.events.length > 0 ? list.json.data.events : null;
        },
        { timeoutMs: 15_000, what: 'the audit record' },
      );
      const detail = await admin.api.get(`/v1/events/${events[0].id}`);
      t.equal(detail.status, 200);
      t.equal(detail.json.data.metadata.traceId, traceId, "the audit event's metadata names the trace");
      for (const service of ['gateway', 'requests'] as const) {
        const lines = stack.logTail(service, 400).split('\n');
        const line = lines.find(
          (l) => l.includes('request completed') && l.includes(`"traceId":"${traceId}"`),
        );
        t.ok(line, `${service}'s request log line names the trace`);
        // And the span it was written in: a log search lands on the very span, not only its trace.
        const spanId = line ? (JSON.parse(line) as { spanId?: string }).spanId : undefined;
        t.match(spanId, /^[0-9a-f]{16}$/, `${service}'s request log line names its span`);
        t.ok(
          spansOfTrace(traceId).some((s) => s.service === `support-desk-${service}` && s.spanId === spanId),
          `${service}'s log line's spanId is one of its spans in the trace`,
        );
      }
    });

    await t.test("the latency histograms' exemplars name the trace (OpenMetrics only)", async (t) => {
      const scrape = async (service: 'requests' | 'audit', accept?: string) => {
        const res = await fetch(`${stack.metricsOrigins[service]}/metrics`, {
          headers: accept ? { accept } : {},
        });
        return { type: res.headers.get('content-type') ?? '', text: await res.text() };
      };
      // As Prometheus asks: OpenMetrics first.
      const accept = 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5';
      const exemplarOf = (text: string, series: string, labels: string[]) =>
        text
          .split('\n')
          .filter((l) => l.startsWith(`${series}{`) && labels.every((label) => l.includes(label)))
          .some((l) => l.includes(`# {trace_id="${traceId}"}`));
      const served = await scrape('requests', accept);
      t.match(served.type, /^application\/openmetrics-text; version=1\.0\.0/);
      t.ok(
        exemplarOf(served.text, 'http_server_request_duration_seconds_bucket', [
          'http_request_method="POST"',
          'http_route="/v1/requests"',
        ]),
        "requests' HTTP histogram: the traced call's bucket names its trace",
      );
      t.match(served.text, /\n# EOF\n$/);
      t.match(served.text, /\noutbox_published_total\{collection="requests"\} \d+/, 'counters keep _total');
      const consumed = await eventually(
        async () => {
          const { text } = await scrape('audit', accept);
          return exemplarOf(text, 'consumer_handler_duration_seconds_bucket', ['consumer="audit"']) || null;
        },
        { timeoutMs: 15_000, what: "audit's handler time with the trace as exemplar" },
      );
      t.ok(consumed, "audit's consumer histogram: the event's handling names the trace it carried");
      // Without asking, the Prometheus text format: no exemplars, counters named as before.
      const plain = await scrape('requests');
      t.match(plain.type, /^text\/plain; version=0\.0\.4/);
      t.notMatch(plain.text, /# \{trace_id=/);
      t.match(plain.text, /# TYPE outbox_published_total counter/);
    });
  });

  t.test('query strings stay out of the spans, as out of the log lines', async (t) => {
    const traceId = randomBytes(16).toString('hex');
    const res = await agent.api.get('/v1/requests?status=open&limit=3', {
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    t.equal(res.status, 200, res.text);
    const spans = await eventually(
      async () => {
        const found = spansOfTrace(traceId);
        const servers = new Set(found.filter((s) => s.kind === SERVER).map((s) => s.service));
        return servers.has('support-desk-gateway') && servers.has('support-desk-requests') ? found : null;
      },
      { timeoutMs: 30_000, what: `the server spans of trace ${traceId}` },
    );
    t.ok(
      spans.some((s) => s.attributes['url.path'] === '/v1/requests'),
      'the path is there',
    );
    t.same(
      spans.filter((s) => JSON.stringify(s.attributes).includes('status=open')).map((s) => s.name),
      [],
      'no span holds the query',
    );
  });
}
