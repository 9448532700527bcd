import { type ProxyTracerProvider, trace } from '@opentelemetry/api';

/**
 * Sends the spans still buffered: the last step of a graceful shutdown. Reaches the SDK's provider
 * through the global API, so a service never loads the SDK itself (the preload does, when on).
 */
export async function flushTraces(): Promise<void> {
  const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate?.() as
    { forceFlush?: () => Promise<void> } | undefined;
  await provider?.forceFlush?.();
}
