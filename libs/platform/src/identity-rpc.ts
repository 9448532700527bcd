import {
  IDENTITY_RPC_CALLERS,
  IDENTITY_RPC_REPLIES,
  type IdentityRpc,
  type IdentityRpcName,
  type NatsNames,
} from '@support-desk/contracts';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { Compile, type Validator } from 'typebox/compile';
import type { IdentityRpcClient, IdentityRpcHandlers } from './identity-port.js';
import type { Logger } from './logger.js';
import type { MessageSigner, MessageVerifier } from './message-signing.js';
import { callRpc, RpcError, serveRpc } from './rpc.js';
import { describeSchemaProblem, firstSchemaProblem } from './schema-problems.js';

const replyCheckers: Record<IdentityRpcName, Validator> = {
  resolveApiKey: Compile(IDENTITY_RPC_REPLIES.resolveApiKey),
  getUser: Compile(IDENTITY_RPC_REPLIES.getUser),
  getGroup: Compile(IDENTITY_RPC_REPLIES.getGroup),
  getOAuthClient: Compile(IDENTITY_RPC_REPLIES.getOAuthClient),
  getSettings: Compile(IDENTITY_RPC_REPLIES.getSettings),
};

/**
 * The first problem of a reply, as a path and a message. A reply is a union (found or not, valid
 * or not): rather than "expected union value", name the problem of the alternative that matched
 * furthest (the longest path), e.g. `/user/email Expected required property`.
 */
export function firstProblem(checker: Validator, reply: unknown): string {
  return describeSchemaProblem(firstSchemaProblem(checker.Type(), reply));
}

/**
 * The one client of identity's RPC table; throws `RpcError` or a NATS error when it cannot answer.
 * Requests are signed by the calling service (`signer`). Each reply is checked against its
 * tolerant schema (`IDENTITY_RPC_REPLIES`: the fields callers read, extra fields allowed): a reply
 * without them is an `RpcError` naming the field.
 */
export function identityRpcClient(
  nc: NatsConnection,
  names: NatsNames,
  timeoutMs: number,
  signer: MessageSigner,
): IdentityRpcClient {
  return {
    async call(name, request) {
      const reply = await callRpc<typeof request, unknown>(nc, names.rpc[name], request, {
        signer,
        timeoutMs,
      });
      const checker = replyCheckers[name];
      if (!checker.Check(reply)) {
        throw new RpcError(`${names.rpc[name]}: malformed reply: ${firstProblem(checker, reply)}`);
      }
      return reply as IdentityRpc[typeof name]['reply'];
    },
  };
}

/**
 * Serves identity's operations (all of them in identity; a subset in a test double), each only
 * to the services `IDENTITY_RPC_CALLERS` names, signed by them. Requests come from other
 * processes: handlers must read them tolerantly (a missing id is "not found").
 */
export function serveIdentityRpc(
  nc: NatsConnection,
  names: NatsNames,
  handlers: Partial<IdentityRpcHandlers>,
  { verifier, logger }: { verifier: MessageVerifier; logger?: Logger },
): { stop(): void } {
  const subs: Subscription[] = [];
  for (const name of Object.keys(handlers) as IdentityRpcName[]) {
    const handler = handlers[name] as (request: unknown) => Promise<unknown>;
    subs.push(
      serveRpc(nc, names.rpc[name], (request) => handler(request ?? {}), {
        verifier,
        callers: IDENTITY_RPC_CALLERS[name],
        logger,
      }),
    );
  }
  return {
    stop() {
      for (const s of subs) s.unsubscribe();
    },
  };
}
