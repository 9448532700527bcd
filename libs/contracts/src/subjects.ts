import type { EventType } from './events.js';
import type { IdentityRpcName } from './internal.js';

/**
 * NATS names, all under one namespace (`NATS_NAMESPACE`, default `sd`) so that test files and
 * side-by-side deployments never share streams or subjects.
 *
 * - Domain events: stream `<NS>_EVENTS`, subjects `<ns>.events.<type>` (e.g. `sd.events.request.created`).
 * - Credential notices (gateways drop cached credentials): stream `<NS>_NOTICES`, subject `<ns>.notices.credentials`.
 * - Request-reply: `<ns>.rpc.<service>.<operation>`.
 * - Operator requests to a service (dead letters): `<ns>.admin.<topic>.<service>`; the webhooks
 *   service's admin RPC (console, deskctl): `<ns>.admin.webhooks`; the requests service's:
 *   `<ns>.admin.requests`.
 */
const DEFAULT_NATS_NAMESPACE = 'sd';

export function natsNames(namespace = DEFAULT_NATS_NAMESPACE) {
  const ns = namespace;
  const upper = ns.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  return {
    namespace: ns,
    eventsStream: `${upper}_EVENTS`,
    eventsWildcard: `${ns}.events.>`,
    eventSubject: (type: EventType) => `${ns}.events.${type}`,
    noticesStream: `${upper}_NOTICES`,
    noticesWildcard: `${ns}.notices.>`,
    credentialNotices: `${ns}.notices.credentials`,
    rpc: {
      resolveApiKey: `${ns}.rpc.identity.api-key.resolve`,
      getUser: `${ns}.rpc.identity.user.get`,
      getGroup: `${ns}.rpc.identity.group.get`,
      getOAuthClient: `${ns}.rpc.identity.oauth-client.get`,
      getSettings: `${ns}.rpc.identity.settings.get`,
    } satisfies Record<IdentityRpcName, string>,
    /** Where a service answers `deskctl dead-letters` about its own dead letters. */
    deadLetters: (service: string) => `${ns}.admin.deadletters.${service}`,
    /** Where the webhooks service answers the console's and deskctl's subscription requests. */
    webhooksAdmin: `${ns}.admin.webhooks`,
    /** Where the requests service answers the console's and deskctl's SLA policy, trash and job requests. */
    requestsAdmin: `${ns}.admin.requests`,
  };
}

export type NatsNames = ReturnType<typeof natsNames>;
