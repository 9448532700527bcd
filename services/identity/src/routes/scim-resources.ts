import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../use-cases/deps.js';
import type { ListParams } from '../use-cases/scim/calls.js';
import { invalidValue } from '../use-cases/scim/errors.js';
import {
  createScimGroup,
  deleteScimGroup,
  getScimGroup,
  listScimGroups,
  patchScimGroup,
  replaceScimGroup,
} from '../use-cases/scim/groups.js';
import {
  createScimUser,
  deleteScimUser,
  getScimUser,
  listScimUsers,
  patchScimUser,
  replaceScimUser,
} from '../use-cases/scim/users.js';

type Id = { Params: { id: string }; Querystring: ListParams };
type Body = Record<string, unknown>;

/** A SCIM resource body must be a JSON object. */
function objectBody(body: unknown): Body {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw invalidValue('the body must be a JSON object');
  return body as Body;
}

type Call = FastifyRequest['scim'];
/** What every SCIM resource carries: its own URI in `meta.location`. */
type ScimResource = { meta: { location: string } };

/** One SCIM resource type's use cases, the same six for Users and Groups. */
interface ResourceUseCases {
  list(deps: Deps, call: Call, params: ListParams): Promise<unknown>;
  create(deps: Deps, call: Call, body: Body): Promise<unknown>;
  get(deps: Deps, call: Call, id: string, params: ListParams): Promise<unknown>;
  replace(deps: Deps, call: Call, id: string, body: Body): Promise<unknown>;
  patch(deps: Deps, call: Call, id: string, body: Body): Promise<unknown>;
  remove(deps: Deps, call: Call, id: string): Promise<void>;
}

const RESOURCES: Record<'/Users' | '/Groups', ResourceUseCases> = {
  '/Users': {
    list: listScimUsers,
    create: createScimUser,
    get: getScimUser,
    replace: replaceScimUser,
    patch: patchScimUser,
    remove: deleteScimUser,
  },
  '/Groups': {
    list: listScimGroups,
    create: createScimGroup,
    get: getScimGroup,
    replace: replaceScimGroup,
    patch: patchScimGroup,
    remove: deleteScimGroup,
  },
};

/** Users and Groups (RFC 7644 §3): each handler is one call into the SCIM use cases. */
export function scimResourceRoutes(scope: FastifyInstance, deps: Deps): void {
  for (const [path, uc] of Object.entries(RESOURCES)) {
    scope.get<{ Querystring: ListParams }>(path, async (request) =>
      uc.list(deps, request.scim, request.query),
    );
    scope.post(path, async (request, reply) => {
      const created = (await uc.create(deps, request.scim, objectBody(request.body))) as ScimResource;
      // RFC 7644 §3.3: the 201 names the new resource in Location, the same URI as meta.location.
      reply.code(201).header('location', created.meta.location);
      return created;
    });
    scope.get<Id>(`${path}/:id`, async (request) =>
      uc.get(deps, request.scim, request.params.id, request.query),
    );
    scope.put<Id>(`${path}/:id`, async (request) =>
      uc.replace(deps, request.scim, request.params.id, objectBody(request.body)),
    );
    scope.patch<Id>(`${path}/:id`, async (request) =>
      uc.patch(deps, request.scim, request.params.id, objectBody(request.body)),
    );
    scope.delete<Id>(`${path}/:id`, async (request, reply) => {
      await uc.remove(deps, request.scim, request.params.id);
      return reply.code(204).send();
    });
  }
}
