import type { RequestsAdminOp, RequestsAdminReplies } from '@support-desk/contracts';
import type { Deps, EventContext } from '@support-desk/identity/admin';
import {
  adminActorOf,
  requestsAdminClient,
  type RequestsAdminFields,
  RequestsUnavailableError,
} from '@support-desk/platform/clients';
import type { CliNats } from '../command.js';

/**
 * One op of the requests service's admin RPC (the one client the settings console uses too), so
 * the same checks and the same events as its HTTP API, with the acting admin (`--as`, or the
 * deskctl actor) as the events' actor and source `cli`.
 */
export const askRequests = <K extends RequestsAdminOp>(
  deps: Deps,
  nats: CliNats | null,
  ctx: EventContext,
  op: K,
  fields: RequestsAdminFields<K>,
): Promise<RequestsAdminReplies[K]> =>
  nats
    ? requestsAdminClient(nats.nc, deps.names, nats.signer, 10_000).call(
        adminActorOf(ctx, 'deskctl'),
        op,
        fields,
      )
    : Promise.reject(new RequestsUnavailableError());
