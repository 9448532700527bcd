import type { IdentityRpc, IdentityRpcName, NatsNames } from '@support-desk/contracts';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from './logger.js';
import { callRpc, serveRpc } from './rpc.js';

/** Asks identity one of its request-reply operations (answered by one of its replicas). */
export interface IdentityRpcClient {
  call<K extends IdentityRpcName>(
    name: K,
    request: IdentityRpc[K]['request'],
  ): Promise<IdentityRpc[K]['reply']>;
}

/** The one client of identity's RPC table; throws `RpcError` or a NATS error when it cannot answer. */
export function identityRpcClient(
  nc: NatsConnection,
  names: NatsNames,
  timeoutMs: number,
): IdentityRpcClient {
  return {
    call: (name, request) => callRpc(nc, names.rpc[name], request, timeoutMs),
  };
}

export type IdentityRpcHandlers = {
  [K in IdentityRpcName]: (request: IdentityRpc[K]['request']) => Promise<IdentityRpc[K]['reply']>;
};

/**
 * Serves identity's operations (all of them in identity; a subset in a test double). Requests
 * come from other processes: handlers must read them tolerantly (a missing id is "not found").
 */
export function serveIdentityRpc(
  nc: NatsConnection,
  names: NatsNames,
  handlers: Partial<IdentityRpcHandlers>,
  logger?: Logger,
): { stop(): void } {
  const subs: Subscription[] = [];
  for (const name of Object.keys(handlers) as IdentityRpcName[]) {
    const handler = handlers[name] as (request: unknown) => Promise<unknown>;
    subs.push(serveRpc(nc, names.rpc[name], (request) => handler(request ?? {}), logger));
  }
  return {
    stop() {
      for (const s of subs) s.unsubscribe();
    },
  };
}

/** The id of a by-id request, or '' when the caller sent none (then nothing is found). */
export const requestedId = (request: unknown): string => {
  const id = (request as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : '';
};
