import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TracingSettings } from './settings.js';

/** Probes and scrapes are not traced: they would be most of the spans and say nothing. */
const UNTRACED_PATHS = /^\/(livez|readyz|metrics)(\/|\?|$)/;

/**
 * Query strings stay out of spans, as out of the request log lines: they carry search terms,
 * emails and OAuth parameters.
 */
const withoutQuery = (url: string) => url.split('?')[0];

function samplerOf(settings: TracingSettings): Sampler {
  // Without an exporter nothing is recorded; ids are still made, so trace context still flows
  // through this service and into its logs and events.
  if (!settings.exporting) return new AlwaysOffSampler();
  const root = {
    always_on: new AlwaysOnSampler(),
    always_off: new AlwaysOffSampler(),
    traceidratio: new TraceIdRatioBasedSampler(settings.ratio),
  };
  switch (settings.sampler) {
    case 'always_on':
    case 'always_off':
    case 'traceidratio':
      return root[settings.sampler];
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: root.always_on });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: root.always_off });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: root.traceidratio });
  }
}

let provider: TracerProvider | undefined;

/**
 * Registers the tracer provider, the context manager, the W3C propagator and the maintained
 * instrumentations (fastify for HTTP in, undici out, MongoDB, ioredis). Must run before those libraries are
 * loaded: `preload.ts` does it from `node --import`.
 */
export function startTracing(settings: TracingSettings): void {
  if (!settings.enabled || provider) return;
  const resource = resourceFromAttributes({ 'service.name': settings.serviceName }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  provider = new TracerProvider({
    resource,
    sampler: samplerOf(settings),
    spanProcessors: settings.exporting ? [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })] : [],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // The server span from fastify's own hooks (one context switch per request) rather than
      // @opentelemetry/instrumentation-http, which binds every listener of every request and
      // response to the context: that doubled the gateway's CPU per call (BENCHMARKS.md).
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        instrumentHooks: false,
        instrumentHandler: false,
        ignorePaths: ({ url }) => UNTRACED_PATHS.test(url),
        requestHook: (span, request) => {
          span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched route'}`);
          span.setAttribute('url.path', withoutQuery(request.url));
        },
      }),
      new UndiciInstrumentation({
        startSpanHook: (request) => ({
          'url.full': `${request.origin}${withoutQuery(request.path)}`,
          'url.query': undefined,
        }),
      }),
      new MongoDBInstrumentation(),
      // The command name only: the arguments hold rate-limit keys (key ids, client addresses).
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command }),
    ],
  });
}
