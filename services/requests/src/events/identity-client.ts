import type {
  GetGroupReply,
  GetUserReply,
  GroupSnapshot,
  NatsNames,
  UserSnapshot,
} from '@support-desk/contracts';
import { callRpc, type NatsConnection } from '@support-desk/platform';

/** Identity's answers about one user or group; null = identity says it does not exist. */
export interface IdentityLookup {
  getUser(id: string): Promise<UserSnapshot | null>;
  getGroup(id: string): Promise<GroupSnapshot | null>;
}

/** Asks identity over NATS request-reply (served by identity's replicas in a queue group). */
export function natsIdentityLookup(nc: NatsConnection, names: NatsNames, timeoutMs: number): IdentityLookup {
  return {
    async getUser(id) {
      const reply = await callRpc<{ id: string }, GetUserReply>(nc, names.rpc.getUser, { id }, timeoutMs);
      return reply.found ? reply.user : null;
    },
    async getGroup(id) {
      const reply = await callRpc<{ id: string }, GetGroupReply>(nc, names.rpc.getGroup, { id }, timeoutMs);
      return reply.found ? reply.group : null;
    },
  };
}
