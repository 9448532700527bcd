import {
  type NatsNames,
  REQUESTS_ADMIN_REPLIES,
  type RequestsAdminOp,
  type RequestsAdminReplies,
  type RequestsAdminRequest,
} from '@support-desk/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import { adminRpcClient, type AdminRpcClient, type AdminRpcFields } from './admin-rpc.js';
import type { MessageSigner } from './message-signing.js';

/** What the console shows and deskctl prints when the requests service does not answer. */
export const REQUESTS_NOT_ANSWERING =
  "The requests service is not answering; SLA policies, the trash and jobs can't be shown or changed right now";

/** The requests service did not answer (no responder, a timeout, or no NATS connection at all). */
export class RequestsUnavailableError extends Error {
  constructor(cause?: unknown) {
    super(REQUESTS_NOT_ANSWERING, { cause });
    this.name = 'RequestsUnavailableError';
  }
}

/** The fields of one op's request, besides `op` and `actor`. */
export type RequestsAdminFields<K extends RequestsAdminOp> = AdminRpcFields<RequestsAdminRequest, K>;

export type RequestsAdminClient = AdminRpcClient<RequestsAdminRequest, RequestsAdminReplies>;

/** The client of the requests admin RPC (the settings console, deskctl): see `adminRpcClient`. */
export const requestsAdminClient = (
  nc: NatsConnection | null,
  names: NatsNames,
  signer: MessageSigner,
  timeoutMs = 5000,
): RequestsAdminClient =>
  adminRpcClient(nc, {
    subject: names.requestsAdmin,
    replies: REQUESTS_ADMIN_REPLIES,
    unavailable: (cause) => new RequestsUnavailableError(cause),
    signer,
    timeoutMs,
  });
