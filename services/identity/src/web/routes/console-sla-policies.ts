import { type RequestsAdminClient, RequestsUnavailableError } from '@support-desk/platform/clients';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type SlaPoliciesPageOptions, slaPoliciesPage } from '../pages/sla-policies.js';
import { type FormBody, field, query } from '../forms.js';
import { type Admin, type ConsoleKit } from './console-session.js';
import { deletionRoutes } from './console-deletion.js';

const open = { config: { public: true } };
const SECTION = '/settings/sla-policies';

/** What the console makes of an answer of the requests admin RPC that failed. */
export const requestsFailure = (kit: ConsoleKit) => (err: unknown) =>
  err instanceof RequestsUnavailableError ? { status: 503, message: err.message } : kit.failure(err);

/**
 * `/settings/sla-policies`: the requests service's SLA policies, managed through its admin RPC
 * (`rpc`, the client deskctl uses too), as the signed-in administrator from the request's address,
 * so the service's use cases decide and record the change exactly as for its API. A policy is
 * created from its JSON (the API body): the shape has nested targets and a calendar, which a text
 * area shows whole and the API guide documents. A refusal is shown with the API's message; a
 * service that does not answer is a 503 page saying so.
 */
export function slaPolicyRoutes(pages: FastifyInstance, kit: ConsoleKit, rpc: RequestsAdminClient): void {
  const { actor } = kit;
  const failure = requestsFailure(kit);

  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    admin: Admin,
    extra: Omit<SlaPoliciesPageOptions, 'frame' | 'policies'> = {},
    status = 200,
  ) {
    let policies: SlaPoliciesPageOptions['policies'] = null;
    let error = extra.error;
    try {
      policies = (await rpc.call(actor(request, admin), 'slaPolicies.list', {})).policies;
    } catch (err) {
      const f = failure(err);
      // A refusal of the form (not JSON) is still said, with why the list is missing.
      error = extra.error ? `${extra.error} ${f.message}` : f.message;
      if (status < 400) status = f.status;
    }
    return kit.send(reply, status, slaPoliciesPage({ frame: admin.frame, policies, ...extra, error }));
  }

  pages.get(SECTION, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const deleted = query(request.query, 'deleted');
    return listPage(request, reply, admin, deleted ? { notice: `SLA policy ${deleted} is deleted.` } : {});
  });

  pages.post(SECTION, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const form = field((request.body ?? {}) as FormBody, 'policy');
    let body: unknown;
    try {
      body = JSON.parse(form);
    } catch (err) {
      return listPage(
        request,
        reply,
        admin,
        { error: `The policy is not JSON: ${(err as Error).message}`, form },
        400,
      );
    }
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return listPage(request, reply, admin, { error: 'The policy must be a JSON object.', form }, 400);
    try {
      const { policy } = await rpc.call(actor(request, admin), 'slaPolicies.create', body as never);
      return listPage(request, reply, admin, { notice: `SLA policy ${policy.name} is created.` }, 201);
    } catch (err) {
      const f = failure(err);
      return listPage(request, reply, admin, { error: f.message, form }, f.status);
    }
  });

  deletionRoutes(pages, kit, {
    section: SECTION,
    title: 'Delete SLA policy',
    async question(request, admin, id) {
      const { policy } = await rpc.call(actor(request, admin), 'slaPolicies.get', { id });
      return `Delete the SLA policy ${policy.name}?`;
    },
    consequence:
      'Requests created afterwards no longer get it; open requests keep their clocks until their policy is picked again. This cannot be undone.',
    button: 'Delete policy',
    back: () => SECTION,
    remove: (request, admin, id) => rpc.call(actor(request, admin), 'slaPolicies.delete', { id }),
    failure,
    listWithError: (request, reply, admin, error, status) =>
      listPage(request, reply, admin, { error }, status),
  });
}
