/**
 * Tracing settings from the standard OpenTelemetry environment variables (the subset this
 * platform supports), checked at start so a typo stops the process with a clear message instead
 * of silently tracing nothing.
 *
 * - Tracing is off unless asked for (unlike the specification's default exporter, `otlp`): a
 *   service must not send spans to a collector nobody configured, nor pay for tracing nobody
 *   reads (about a third of the gateway's CPU per call; see BENCHMARKS.md). Off, the gateway
 *   passes a caller's `traceparent` on untouched.
 * - `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or
 *   `OTEL_TRACES_EXPORTER=otlp`: on, spans exported with OTLP (the exporter reads the other
 *   `OTEL_EXPORTER_OTLP_*` variables itself).
 * - `OTEL_TRACES_EXPORTER=none`: trace context only. Every service continues an incoming
 *   `traceparent`, passes it on (HTTP, NATS, the outbox) and writes the trace id in its logs and
 *   events, but records no span.
 * - `OTEL_SDK_DISABLED=true`: off, whatever else is set.
 * - `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`: the specification's samplers; default
 *   `parentbased_always_on`.
 * - `OTEL_SERVICE_NAME`: default `support-desk-<service>`.
 */
type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

const SAMPLERS: SamplerName[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

export interface TracingSettings {
  /** Trace context flows through the service (ids in logs and events), spans or not. */
  enabled: boolean;
  /** Spans are recorded and sent with OTLP (http/protobuf). */
  exporting: boolean;
  sampler: SamplerName;
  /** The sampling ratio of the `traceidratio` samplers. */
  ratio: number;
  serviceName: string;
}

export class TracingSettingsError extends Error {}

type Env = Record<string, string | undefined>;

const isSet = (v: string | undefined) => v !== undefined && v.trim() !== '';

function flag(env: Env, name: string): boolean {
  const v = (env[name] ?? '').trim().toLowerCase();
  if (v === '' || v === 'false') return false;
  if (v === 'true') return true;
  throw new TracingSettingsError(`${name}=${env[name]} is not valid (true or false)`);
}

/** The traced service's name: `OTEL_SERVICE_NAME`, else from the entry script's path. */
function serviceNameOf(env: Env, entry: string | undefined): string {
  if (isSet(env.OTEL_SERVICE_NAME)) return env.OTEL_SERVICE_NAME!.trim();
  const match = /services[/\\]([a-z0-9-]+)[/\\]/.exec(entry ?? '');
  return `support-desk-${match ? match[1] : 'service'}`;
}

export function tracingSettings(env: Env = process.env, entry = process.argv[1]): TracingSettings {
  const exporterName = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  if (exporterName !== '' && exporterName !== 'otlp' && exporterName !== 'none')
    throw new TracingSettingsError(
      `OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER} is not supported (otlp or none)`,
    );
  const endpoint = isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const enabled = !flag(env, 'OTEL_SDK_DISABLED') && (exporterName !== '' || endpoint);
  const exporting = enabled && (exporterName === 'otlp' || (exporterName === '' && endpoint));
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
  if (exporting && protocol !== '' && protocol !== 'http/protobuf')
    throw new TracingSettingsError(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported (http/protobuf, the default)`,
    );
  const sampler = ((env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() ||
    'parentbased_always_on') as SamplerName;
  if (!SAMPLERS.includes(sampler))
    throw new TracingSettingsError(
      `OTEL_TRACES_SAMPLER=${env.OTEL_TRACES_SAMPLER} is not supported (one of ${SAMPLERS.join(', ')})`,
    );
  let ratio = 1;
  if (sampler.endsWith('traceidratio') && isSet(env.OTEL_TRACES_SAMPLER_ARG)) {
    ratio = Number(env.OTEL_TRACES_SAMPLER_ARG);
    if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
      throw new TracingSettingsError(
        `OTEL_TRACES_SAMPLER_ARG=${env.OTEL_TRACES_SAMPLER_ARG} is not a ratio between 0 and 1`,
      );
  }
  return { enabled, exporting, sampler, ratio, serviceName: serviceNameOf(env, entry) };
}
