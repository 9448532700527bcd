import {
  type AdminActor,
  BulkJobQuery,
  CreateSlaPolicyBody,
  DeletedRequestsQuery,
  type Principal,
  ROLE_SCOPES,
  RequestsAdminEnvelope,
  type RequestsAdminOp,
  type RequestsAdminReplies,
  UpdateSlaPolicyBody,
  requestsRouteSchemas,
  slaPoliciesRouteSchemas,
} from '@support-desk/contracts';
import { adminContextOf, adminFieldsOf as fieldsOf, serveAdminRpc } from '@support-desk/platform/clients';
import { checkInput } from '@support-desk/platform/http';
import type { MessageVerifier, NatsConnection } from '@support-desk/platform/messaging';
import { getBulkJob } from '../use-cases/bulk-jobs.js';
import type { Deps } from '../use-cases/deps.js';
import {
  createSlaPolicy,
  deleteSlaPolicy,
  getSlaPolicy,
  listSlaPolicies,
  updateSlaPolicy,
} from '../use-cases/sla-policies.js';
import { listDeletedRequests, restoreRequest } from '../use-cases/trash.js';

type Request = Record<string, unknown>;
type Reply = RequestsAdminReplies[RequestsAdminOp];

/**
 * The administrator as the use cases that take a principal see them: an admin with the admin
 * role's scopes, the console or deskctl as the credential (it is identity's word, see below).
 */
const principalOf = (a: AdminActor): Principal => ({
  userId: a.userId,
  email: a.email,
  name: a.name,
  role: 'admin',
  scopes: [...ROLE_SCOPES.admin],
  credential: { type: 'api_key', id: a.via },
  clientIp: a.ip,
  userAgent: a.userAgent ?? (a.via === 'deskctl' ? 'deskctl' : null),
  requestId: a.requestId ?? '',
});

const idOf = (request: Request, params: { properties: object }) =>
  fieldsOf<{ id: string }>({ id: request.id }, params, 'params').id;
const policyIdOf = (request: Request) =>
  idOf(request, slaPoliciesRouteSchemas['GET /v1/sla-policies/:id'].params);

/** One op: the same use case as its HTTP route, as the administrator who asked. */
async function answer(deps: Deps, request: Request): Promise<Reply> {
  const { op, actor } = checkInput<{ op: RequestsAdminOp; actor: AdminActor }>(
    RequestsAdminEnvelope,
    request,
    'body',
  );
  const ctx = adminContextOf(actor);
  switch (op) {
    case 'slaPolicies.list':
      return { ok: true, ...(await listSlaPolicies(deps)) };
    case 'slaPolicies.get':
      return { ok: true, policy: await getSlaPolicy(deps, policyIdOf(request)) };
    case 'slaPolicies.create': {
      const body = fieldsOf<CreateSlaPolicyBody>(request, CreateSlaPolicyBody, 'body');
      return { ok: true, policy: await createSlaPolicy(deps, ctx, body) };
    }
    case 'slaPolicies.update': {
      const id = policyIdOf(request);
      const changes = fieldsOf<UpdateSlaPolicyBody>(request, UpdateSlaPolicyBody, 'body');
      return { ok: true, policy: await updateSlaPolicy(deps, ctx, id, changes) };
    }
    case 'slaPolicies.delete':
      return { ok: true, ...(await deleteSlaPolicy(deps, ctx, policyIdOf(request))) };
    case 'trash.list': {
      const query = fieldsOf<DeletedRequestsQuery>(request, DeletedRequestsQuery, 'querystring');
      return { ok: true, ...(await listDeletedRequests(deps, query)) };
    }
    case 'trash.restore': {
      const id = idOf(request, requestsRouteSchemas['POST /v1/requests/:id/restore'].params);
      return { ok: true, request: await restoreRequest(deps, principalOf(actor), id, ctx) };
    }
    case 'jobs.get': {
      const id = idOf(request, requestsRouteSchemas['GET /v1/jobs/:id'].params);
      const query = fieldsOf<BulkJobQuery>(request, BulkJobQuery, 'querystring');
      return { ok: true, job: await getBulkJob(deps, principalOf(actor), id, query) };
    }
  }
}

/**
 * The requests admin RPC (`names.requestsAdmin`): the settings console and deskctl manage SLA
 * policies, the trash and follow bulk jobs through it, with the use cases the HTTP routes call, so
 * the same checks, answers and events (the administrator as actor, `console` or `cli` as source,
 * the console's address). See `serveAdminRpc`: identity-signed requests only, refusals as the
 * HTTP API words them.
 */
export const serveRequestsAdmin = (nc: NatsConnection, deps: Deps, verifier: MessageVerifier) =>
  serveAdminRpc(nc, deps.names.requestsAdmin, (request) => answer(deps, request), {
    verifier,
    logger: deps.logger,
  });
