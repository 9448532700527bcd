import { type TObject, Type } from 'typebox';
import {
  type BulkJobQuery,
  BulkJobView,
  DeletedRequestItem,
  type DeletedRequestsQuery,
  RequestDetail,
} from './requests.js';
import {
  type CreateSlaPolicyBody,
  SlaPolicy,
  SlaPolicyList,
  type UpdateSlaPolicyBody,
} from './sla-policies.js';
import { StringEnum } from './schema.js';
import { type AdminActor, AdminActor as ActorSchema, tolerant } from './webhooks-admin.js';

/**
 * The requests service's admin RPC (`natsNames(ns).requestsAdmin`): what the settings console and
 * deskctl (both in identity) ask of the requests service about SLA policies, the trash and bulk
 * jobs, answered with the same use cases as its HTTP API. The same rules as the webhooks admin RPC
 * (webhooks-admin.ts): versioned by `callRpc`, tolerant readers on both sides, the same actor and
 * the same refusal (`AdminRpcError`).
 */
export const REQUESTS_ADMIN_VERSION = 1;

export const REQUESTS_ADMIN_OPS = [
  'slaPolicies.list',
  'slaPolicies.get',
  'slaPolicies.create',
  'slaPolicies.update',
  'slaPolicies.delete',
  'trash.list',
  'trash.restore',
  'jobs.get',
] as const;
export type RequestsAdminOp = (typeof REQUESTS_ADMIN_OPS)[number];

/** What every request carries (read first; the op's own fields are read by the op). */
export const RequestsAdminEnvelope = Type.Object({
  op: StringEnum(REQUESTS_ADMIN_OPS),
  actor: ActorSchema,
});

type Id = { id: string };

/**
 * The requests, one per op. The fields of `slaPolicies.create`/`update` are the HTTP API's body,
 * those of `trash.list` and `jobs.get` its query (checked by the same schemas, so the same 400
 * messages); `id` is its path parameter.
 */
export type RequestsAdminRequest = { actor: AdminActor } & (
  | { op: 'slaPolicies.list' }
  | ({ op: 'slaPolicies.get' } & Id)
  | ({ op: 'slaPolicies.create' } & CreateSlaPolicyBody)
  | ({ op: 'slaPolicies.update' } & Id & UpdateSlaPolicyBody)
  | ({ op: 'slaPolicies.delete' } & Id)
  | ({ op: 'trash.list' } & DeletedRequestsQuery)
  | ({ op: 'trash.restore' } & Id)
  | ({ op: 'jobs.get' } & Id & BulkJobQuery)
);

/** The answer of each op when it succeeded (`ok: true`): the HTTP API's `data`, named. */
export interface RequestsAdminReplies {
  'slaPolicies.list': { ok: true } & SlaPolicyList;
  'slaPolicies.get': { ok: true; policy: SlaPolicy };
  'slaPolicies.create': { ok: true; policy: SlaPolicy };
  'slaPolicies.update': { ok: true; policy: SlaPolicy };
  'slaPolicies.delete': { ok: true; id: string; deleted: true };
  'trash.list': {
    ok: true;
    deleted: DeletedRequestItem[];
    pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
  };
  'trash.restore': { ok: true; request: RequestDetail };
  'jobs.get': { ok: true; job: BulkJobView };
}

const Ok = Type.Literal(true);
const Policy = tolerant(SlaPolicy);

/** What the client checks in each successful reply (tolerant: extra fields allowed). */
export const REQUESTS_ADMIN_REPLIES = {
  'slaPolicies.list': Type.Object({
    ok: Ok,
    policies: Type.Array(Policy),
    // What the service's SLA_POLICY table says, read as given (its minutes may be fractions).
    fallback: Type.Object({ standard: Type.Object({}), vip: Type.Object({}) }),
  }),
  'slaPolicies.get': Type.Object({ ok: Ok, policy: Policy }),
  'slaPolicies.create': Type.Object({ ok: Ok, policy: Policy }),
  'slaPolicies.update': Type.Object({ ok: Ok, policy: Policy }),
  'slaPolicies.delete': Type.Object({ ok: Ok, id: Type.String(), deleted: Type.Literal(true) }),
  'trash.list': Type.Object({
    ok: Ok,
    deleted: Type.Array(tolerant(DeletedRequestItem)),
    pagination: Type.Object({
      nextCursor: Type.Union([Type.String(), Type.Null()]),
      hasMore: Type.Boolean(),
    }),
  }),
  'trash.restore': Type.Object({ ok: Ok, request: tolerant(RequestDetail) }),
  'jobs.get': Type.Object({ ok: Ok, job: tolerant(BulkJobView) }),
} satisfies Record<RequestsAdminOp, TObject>;
