import { type Context, context, isSpanContextValid, propagation, trace } from '@opentelemetry/api';

// The trace ids and carriers logs, events and outbox entries keep: the OpenTelemetry API only,
// nothing of NATS, so the platform's core (logger, events) loads no messaging client.

/** The W3C trace context of a message, as the propagator writes it (`traceparent`, `tracestate`). */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** The headers trace context travels in (`traceparent`, `tracestate`), none when tracing is off. */
export const traceContextHeaders = (): string[] => propagation.fields();

/** The trace id of the span now active, if any (logs, events). */
export function activeTraceId(active: Context = context.active()): string | undefined {
  return activeSpanIds(active)?.traceId;
}

/** The active span's trace and span ids (W3C hex), undefined outside any trace. */
export function activeSpanIds(
  active: Context = context.active(),
): { traceId: string; spanId: string } | undefined {
  const span = trace.getSpan(active);
  if (!span) return undefined;
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : undefined;
}

/**
 * The active trace context as a carrier, kept with a message that leaves later (an outbox entry),
 * so its publisher continues the trace of the call that wrote it. Undefined outside any trace.
 */
export function injectTraceContext(): TraceCarrier | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate
    ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate }
    : { traceparent: carrier.traceparent };
}
