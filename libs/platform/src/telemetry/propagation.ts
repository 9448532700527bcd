import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { activeTraceId, type TraceCarrier } from './trace-context.js';

const tracer = () => trace.getTracer('@support-desk/platform');

const headerGetter: TextMapGetter<MsgHdrs> = {
  keys: (h) => [...h.keys()],
  get: (h, key) => (h.has(key) ? h.get(key) : undefined),
};

function ended<T>(span: Span, run: () => Promise<T>): Promise<T> {
  return run().then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
      span.end();
      throw err;
    },
  );
}

type Attributes = Record<string, string>;

const natsAttributes = (subject: string, operation: 'send' | 'process', extra: Attributes = {}) => ({
  'messaging.system': 'nats',
  'messaging.operation.type': operation,
  'messaging.destination.name': subject,
  ...extra,
});

/** Runs `send` in a new span under `parent`, handing it NATS headers that carry the span. */
function sendInSpan<T>(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  parent: Context,
  send: (headers: MsgHdrs) => Promise<T>,
): Promise<T> {
  const span = tracer().startSpan(name, { kind, attributes }, parent);
  const withSpan = trace.setSpan(parent, span);
  const h = natsHeaders();
  propagation.inject(withSpan, h, { set: (c, k, v) => c.set(k, v) });
  return ended(span, () => context.with(withSpan, () => send(h)));
}

/** Runs `handle` in a new span continuing the trace in the NATS headers (a new one without). */
function receiveInSpan<T>(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  headers: MsgHdrs | undefined,
  handle: (traceId: string | undefined) => Promise<T>,
): Promise<T> {
  const parent = headers ? propagation.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
  const span = tracer().startSpan(name, { kind, attributes }, parent);
  const withSpan = trace.setSpan(parent, span);
  return ended(span, () => context.with(withSpan, () => handle(activeTraceId(withSpan))));
}

/**
 * Publishes one message in a PRODUCER span, a child of the trace context the message was written
 * in (`carrier`), and hands `publish` the NATS headers carrying the new span's context. Messages
 * written outside any trace are published without headers and without a span.
 */
export function publishSpan<T>(
  subject: string,
  messageId: string,
  carrier: TraceCarrier | undefined,
  publish: (headers: MsgHdrs | undefined) => Promise<T>,
): Promise<T> {
  if (!carrier?.traceparent) return publish(undefined);
  const parent = propagation.extract(ROOT_CONTEXT, {
    traceparent: carrier.traceparent,
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  });
  const attributes = natsAttributes(subject, 'send', { 'messaging.message.id': messageId });
  return sendInSpan(`send ${subject}`, SpanKind.PRODUCER, attributes, parent, publish);
}

/**
 * Runs a consumer's handling of one message in a CONSUMER span, continuing the trace its
 * publisher put in the NATS headers (a new trace when there is none).
 */
export function consumeSpan<T>(
  subject: string,
  consumer: string,
  headers: MsgHdrs | undefined,
  handle: (traceId: string | undefined) => Promise<T>,
): Promise<T> {
  const attributes = natsAttributes(subject, 'process', { 'messaging.consumer.group.name': consumer });
  return receiveInSpan(`process ${subject}`, SpanKind.CONSUMER, attributes, headers, handle);
}

/** A NATS request (RPC) in a CLIENT span of the active trace; outside any trace, as it is. */
export function requestSpan<T>(
  subject: string,
  send: (headers: MsgHdrs | undefined) => Promise<T>,
): Promise<T> {
  const active = context.active();
  if (!trace.getSpan(active)) return send(undefined);
  return sendInSpan(subject, SpanKind.CLIENT, natsAttributes(subject, 'send'), active, send);
}

/** Serves one NATS request in a SERVER span continuing the caller's trace. */
export function serveSpan<T>(
  subject: string,
  headers: MsgHdrs | undefined,
  handle: () => Promise<T>,
): Promise<T> {
  return receiveInSpan(subject, SpanKind.SERVER, natsAttributes(subject, 'process'), headers, handle);
}
