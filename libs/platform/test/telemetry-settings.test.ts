import { spawnSync } from 'node:child_process';
import t from 'tap';
import { TracingSettingsError, tracingSettings } from '../src/telemetry/settings.js';

const entry = '/app/services/requests/dist/src/server.js';

t.test('off unless an exporter or an endpoint asks for it', async (t) => {
  t.match(tracingSettings({}, entry), { enabled: false, exporting: false });
  t.match(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, entry), {
    enabled: true,
    exporting: true,
    sampler: 'parentbased_always_on',
    serviceName: 'support-desk-requests',
  });
  t.match(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, entry), {
    exporting: true,
  });
  t.match(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' }, entry), { enabled: true, exporting: true });
  t.match(
    tracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, entry),
    { enabled: true, exporting: false },
    'none: trace context only, even with an endpoint',
  );
  t.match(
    tracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, entry),
    { enabled: false, exporting: false },
    'disabled wins',
  );
});

t.test('sampler, ratio and service name from the standard variables', async (t) => {
  const on = { OTEL_TRACES_EXPORTER: 'otlp' };
  t.match(
    tracingSettings(
      { ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
      entry,
    ),
    { sampler: 'parentbased_traceidratio', ratio: 0.1 },
  );
  t.match(tracingSettings({ ...on, OTEL_SERVICE_NAME: 'desk-requests-eu' }, entry), {
    serviceName: 'desk-requests-eu',
  });
});

t.test('a value it cannot honour stops the start, naming the variable', async (t) => {
  const on = { OTEL_TRACES_EXPORTER: 'otlp' };
  const refused: [Record<string, string>, RegExp][] = [
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, /OTEL_TRACES_EXPORTER=jaeger/],
    [{ ...on, OTEL_TRACES_SAMPLER: 'sometimes' }, /OTEL_TRACES_SAMPLER=sometimes/],
    [{ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, /SAMPLER_ARG=1.5/],
    [{ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL=grpc/],
    [{ OTEL_SDK_DISABLED: 'yes' }, /OTEL_SDK_DISABLED=yes/],
  ];
  for (const [env, message] of refused)
    t.throws(() => tracingSettings(env, entry), { constructor: TracingSettingsError, message });
});

t.test('the preload refuses a bad setting before the service starts', async (t) => {
  const preload = new URL('../src/telemetry/preload.js', import.meta.url).href;
  const run = spawnSync(process.execPath, ['--import', preload, '-e', 'console.log("started")'], {
    env: { ...process.env, OTEL_TRACES_EXPORTER: 'zipkin' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(run.status, 1);
  t.match(run.stderr, /invalid configuration: OTEL_TRACES_EXPORTER=zipkin is not supported/);
  t.notMatch(run.stdout, /started/, 'the service never ran');
});
