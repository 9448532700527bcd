import type { IdentityRpc, IdentityRpcName } from '@support-desk/contracts';

// Identity's request-reply operations as use cases see them: the client they are handed and the
// handlers identity's own use cases implement. Their NATS transport is identity-rpc.ts.

/** Asks identity one of its request-reply operations (answered by one of its replicas). */
export interface IdentityRpcClient {
  call<K extends IdentityRpcName>(
    name: K,
    request: IdentityRpc[K]['request'],
  ): Promise<IdentityRpc[K]['reply']>;
}

export type IdentityRpcHandlers = {
  [K in IdentityRpcName]: (request: IdentityRpc[K]['request']) => Promise<IdentityRpc[K]['reply']>;
};

/** The id of a by-id request, or '' when the caller sent none (then nothing is found). */
export const requestedId = (request: unknown): string => {
  const id = (request as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : '';
};
