import { type Static, Type } from 'typebox';
import { ErrorBody, Ok } from './envelope.js';
import { IdSchema } from './ids.js';
import {
  CURSOR_PATTERN,
  CursorPageQuery,
  EnumListQuery,
  ListPagination,
  Pagination,
  MAX_CURSOR_LENGTH,
  PageQuery,
  SearchQuery,
  SortQuery,
} from './pagination.js';
import type { RouteSchemaMap } from './routes.js';
import { DateTimeString, DescribedPattern, StringEnum } from './schema.js';

export const REQUEST_STATUSES = ['open', 'assigned', 'in_progress', 'pending', 'resolved', 'closed'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];
const RequestStatusSchema = StringEnum(REQUEST_STATUSES);

export const PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];
const PrioritySchema = StringEnum(PRIORITIES);

/** on_track → at_risk (past the warning threshold) → breached; met once the target was honoured. */
const SLA_STATUSES = ['on_track', 'at_risk', 'breached', 'met'] as const;
export type SlaStatus = (typeof SLA_STATUSES)[number];
const SlaStatusSchema = StringEnum(SLA_STATUSES);

/** Field limits of the requests API (documented in services/requests/README.md). */
export const REQUEST_LIMITS = {
  titleMax: 200,
  descriptionMax: 20_000,
  categoryMax: 100,
  tagsMax: 20,
  tagMax: 50,
  resolutionMax: 10_000,
  commentMax: 20_000,
  commentsPerRequestMax: 1000,
  attachmentsPerRequestMax: 100,
  filenameMax: 255,
} as const;

const L = REQUEST_LIMITS;
const nullable = <T extends import('typebox').TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const Title = Type.String({ minLength: 1, maxLength: L.titleMax, pattern: '\\S' });
const Description = Type.String({ minLength: 1, maxLength: L.descriptionMax, pattern: '\\S' });
const Category = Type.String({ minLength: 1, maxLength: L.categoryMax, pattern: '\\S' });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: L.tagMax, pattern: '^\\S(.*\\S)?$' }), {
  maxItems: L.tagsMax,
  description: `At most ${L.tagsMax} tags of at most ${L.tagMax} characters; duplicates are dropped.`,
});

const RequestUserRef = Type.Object(
  { id: Type.String(), email: Type.String(), name: Type.String() },
  { additionalProperties: false },
);
const RequesterDetail = Type.Object(
  { id: Type.String(), email: Type.String(), name: Type.String(), isVip: Type.Boolean() },
  { additionalProperties: false },
);
const RequestGroupRef = Type.Object(
  { id: Type.String(), name: Type.String() },
  { additionalProperties: false },
);

export const SLA_CLOCK_STATES = ['running', 'paused', 'stopped'] as const;
const SlaClockView = Type.Object(
  {
    state: StringEnum(SLA_CLOCK_STATES, {
      description:
        "`running`; `paused` while the request is in one of its policy's pause statuses; `stopped` once " +
        'the target was met or missed for good (first response given, request resolved or closed).',
    }),
    breachAt: Type.Union([DateTimeString(), Type.Null()], {
      description:
        'When the clock breaches if it keeps running (business hours and holidays counted): in the past ' +
        'once breached; null while paused or stopped.',
    }),
    remainingSeconds: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'Business time left until the breach, in seconds: negative once breached (business time past the ' +
        'target), frozen while paused, null once stopped.',
    }),
  },
  { additionalProperties: false },
);

const slaPolicyFields = {
  policy: Type.Union(
    [Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }), Type.Null()],
    { description: 'The SLA policy picked for the request (`/v1/sla-policies`); null for the fallback.' },
  ),
  response: SlaClockView,
  resolution: SlaClockView,
};

const RequestSla = Type.Object(
  {
    tier: Type.String({
      description:
        'The policy and row applied, `<policy name>:<priority>`, e.g. `gold:high`; with no policy matching, ' +
        'the fallback row `standard:high` or `vip:critical`.',
    }),
    responseTarget: DateTimeString(),
    resolutionTarget: DateTimeString(),
    responseStatus: SlaStatusSchema,
    resolutionStatus: SlaStatusSchema,
    ...slaPolicyFields,
  },
  {
    additionalProperties: false,
    description:
      "Targets count business time of the policy's calendar and stand still in its pause statuses. " +
      'While a clock is paused its target shows the moment computed before the pause.',
  },
);
type RequestSla = Static<typeof RequestSla>;

export const RequestComment = Type.Object(
  {
    id: IdSchema('comment'),
    content: Type.String(),
    author: Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }),
    isInternal: Type.Boolean(),
    createdAt: DateTimeString(),
  },
  { additionalProperties: false },
);
export type RequestComment = Static<typeof RequestComment>;

export const RequestAttachment = Type.Object(
  {
    id: IdSchema('attachment'),
    filename: Type.String(),
    size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
    contentType: Type.String({ description: 'Detected from the bytes, not from the client.' }),
    uploadedAt: DateTimeString(),
    url: Type.String(),
  },
  { additionalProperties: false },
);
export type RequestAttachment = Static<typeof RequestAttachment>;

const requestCore = {
  id: IdSchema('request'),
  title: Type.String(),
  description: Type.String(),
  status: RequestStatusSchema,
  priority: PrioritySchema,
  category: nullable(Type.String()),
  createdAt: DateTimeString(),
  updatedAt: DateTimeString(),
};

/** A request as it appears in `GET /v1/requests`: references as ids, no sla/tags/comments/attachments. */
export const RequestListItem = Type.Object(
  {
    ...requestCore,
    assignedTo: nullable(Type.String()),
    assignedGroup: nullable(Type.String()),
    requester: RequestUserRef,
  },
  { additionalProperties: false },
);
export type RequestListItem = Static<typeof RequestListItem>;

/** A request as `GET /v1/requests/:id` returns it. `resolution` is present once resolved (and closed). */
export const RequestDetail = Type.Object(
  {
    ...requestCore,
    tags: Type.Array(Type.String()),
    assignedTo: nullable(RequestUserRef),
    assignedGroup: nullable(RequestGroupRef),
    requester: RequesterDetail,
    resolution: Type.Optional(nullable(Type.String())),
    sla: RequestSla,
    comments: Type.Array(RequestComment),
    attachments: Type.Array(RequestAttachment),
  },
  { additionalProperties: false },
);
export type RequestDetail = Static<typeof RequestDetail>;

/**
 * A request as every event about it carries it (`snapshot`, added within event version 1): the
 * fields of `GET /v1/requests/:id` as an agent sees them, right after the change, with comments and
 * attachments as counts. Their bodies stay out: an internal note must never leave (the events API
 * and webhooks are read more widely), and a request of 1,000 comments would make every one of its
 * events megabytes long; the comment's own event (`request.comment_added`) carries a public one.
 */
const { comments: _comments, attachments: _attachments, ...requestOwnFields } = RequestDetail.properties;
/** In a snapshot the SLA policy fields are optional: events written before them stay version 1. */
const SnapshotSla = Type.Object(
  {
    ...RequestSla.properties,
    policy: Type.Optional(slaPolicyFields.policy),
    response: Type.Optional(SlaClockView),
    resolution: Type.Optional(SlaClockView),
  },
  { additionalProperties: false },
);
export const RequestEventSnapshot = Type.Object(
  {
    ...requestOwnFields,
    sla: SnapshotSla,
    commentCount: Type.Integer({
      minimum: 0,
      description: 'Public comments (internal notes are neither shown nor counted).',
    }),
    attachmentCount: Type.Integer({ minimum: 0 }),
  },
  {
    additionalProperties: false,
    description:
      'The request right after the change, as `GET /v1/requests/:id` shows it to an agent, with ' +
      '`commentCount` and `attachmentCount` instead of the comments and attachments.',
  },
);
export type RequestEventSnapshot = Static<typeof RequestEventSnapshot>;

const SupportRequestParams = Type.Object({ id: IdSchema('request') }, { additionalProperties: false });
const AttachmentIdParams = Type.Object({ id: IdSchema('attachment') }, { additionalProperties: false });

/** The orders `GET /v1/requests` offers (`sort`); `-` prefix = descending. */
export const REQUEST_SORT_FIELDS = ['createdAt', 'updatedAt', 'priority'] as const;
export const DEFAULT_REQUEST_SORT = '-createdAt';
/** The longest `q` accepted: the search is a regex scan, bounded in input as well as in time. */
export const REQUEST_SEARCH_MAX = 100;

// One tag of the `tags` filter: a stored tag (no space at either end, at most `tagMax`), no comma.
const TAG_IN_LIST = `[^,\\s](?:[^,\\n\\r\\u2028\\u2029]{0,${L.tagMax - 2}}[^,\\s])?`;

export const ListRequestsQuery = Type.Object(
  {
    status: Type.Optional(EnumListQuery(REQUEST_STATUSES, 'Status')),
    priority: Type.Optional(EnumListQuery(PRIORITIES, 'Priority')),
    assignedTo: Type.Optional(IdSchema('user')),
    groupId: Type.Optional(IdSchema('group')),
    requester: Type.Optional(IdSchema('user', "Requests raised by this user (the requester's id).")),
    tags: Type.Optional(
      Type.String({
        maxLength: L.tagsMax * (L.tagMax + 1),
        pattern: DescribedPattern(
          `^${TAG_IN_LIST}(?:,${TAG_IN_LIST}){0,${L.tagsMax - 1}}$`,
          `must be tags separated by commas: at most ${L.tagsMax}, each of 1–${L.tagMax} characters ` +
            'without a space at either end',
        ),
        description:
          `Tags: one, or several separated by commas (any of them matches; at most ${L.tagsMax}). A tag ` +
          'matches exactly as stored (case-sensitive; `q` searches tags case-insensitively). A tag ' +
          'holding a comma cannot be named here.',
      }),
    ),
    createdAfter: Type.Optional(DateTimeString('Created at or after this instant.')),
    createdBefore: Type.Optional(DateTimeString('Created strictly before this instant.')),
    ...SearchQuery({
      minLength: 1,
      maxLength: REQUEST_SEARCH_MAX,
      pattern: '\\S',
      description:
        `Search: requests whose title, description or one of whose tags contains this text, ` +
        `case-insensitively (plain text, not a pattern; at most ${REQUEST_SEARCH_MAX} characters). ` +
        'Combines with the other filters; a scan of the filtered requests (docs/api-guide.md, "Overload", gives its cost).',
    }),
    sort: Type.Optional(
      SortQuery(
        REQUEST_SORT_FIELDS,
        DEFAULT_REQUEST_SORT,
        '`priority` orders by severity (low < medium < high < critical), so `-priority` lists critical ' +
          'first; ties by `createdAt`, then id, in the same direction.',
      ),
    ),
    ...CursorPageQuery,
  },
  { additionalProperties: false },
);
export type ListRequestsQuery = Static<typeof ListRequestsQuery>;

export const CreateRequestBody = Type.Object(
  {
    title: Title,
    description: Description,
    priority: PrioritySchema,
    category: Type.Optional(Category),
    assignedTo: Type.Optional(IdSchema('user')),
    assignedGroup: Type.Optional(IdSchema('group')),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false },
);
export type CreateRequestBody = Static<typeof CreateRequestBody>;

export const UpdateRequestBody = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(Description),
    status: Type.Optional(RequestStatusSchema),
    priority: Type.Optional(PrioritySchema),
    category: Type.Optional(nullable(Category)),
    assignedTo: Type.Optional(nullable(IdSchema('user'))),
    assignedGroup: Type.Optional(nullable(IdSchema('group'))),
    tags: Type.Optional(Tags),
    resolution: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: L.resolutionMax,
        description: 'How the request was solved; accepted only together with status `resolved`.',
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    // `resolution` only with `status: resolved`, stated where a client (or a generator) reads it.
    if: { required: ['resolution'] },
    then: { required: ['status'], properties: { status: { const: 'resolved' } } },
  },
);
export type UpdateRequestBody = Static<typeof UpdateRequestBody>;

export const AddCommentBody = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: L.commentMax, pattern: '\\S' }),
    isInternal: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type AddCommentBody = Static<typeof AddCommentBody>;

/** The orders `GET /v1/requests/:id/comments` offers: oldest first (the default), or newest first. */
export const COMMENT_SORT_FIELDS = ['createdAt'] as const;
export const DEFAULT_COMMENT_SORT = 'createdAt';

export const ListCommentsQuery = Type.Object(
  {
    sort: Type.Optional(SortQuery(COMMENT_SORT_FIELDS, DEFAULT_COMMENT_SORT)),
    ...CursorPageQuery,
  },
  { additionalProperties: false },
);
export type ListCommentsQuery = Static<typeof ListCommentsQuery>;

const CommentList = Type.Object(
  { comments: Type.Array(RequestComment), pagination: ListPagination },
  { additionalProperties: false },
);

export const CreatedRequest = Type.Object(
  { id: IdSchema('request'), title: Type.String(), status: RequestStatusSchema, createdAt: DateTimeString() },
  { additionalProperties: false },
);
export const UpdatedRequest = Type.Object(
  { id: IdSchema('request'), status: RequestStatusSchema, updatedAt: DateTimeString() },
  { additionalProperties: false },
);
export const UploadedAttachment = Type.Object(
  { id: IdSchema('attachment'), filename: Type.String(), size: Type.Integer(), url: Type.String() },
  { additionalProperties: false },
);
const RequestList = Type.Object(
  { requests: Type.Array(RequestListItem), pagination: ListPagination },
  { additionalProperties: false },
);

/** A forward-only list's `cursor`: where the previous answer left off. */
const resumeCursor = (description: string) =>
  Type.Optional(
    Type.String({ minLength: 1, maxLength: MAX_CURSOR_LENGTH, pattern: CURSOR_PATTERN, description }),
  );

/** The changes feed's query: where to resume, and how many changes at most. */
export const RequestChangesQuery = Type.Object(
  {
    cursor: resumeCursor(
      'The `nextCursor` of the previous call; without it the feed starts from the beginning ' +
        '(every request, the deleted ones as tombstones).',
    ),
    limit: Type.Optional(PageQuery.limit),
  },
  { additionalProperties: false },
);
export type RequestChangesQuery = Static<typeof RequestChangesQuery>;

/** One change of the feed: the request as it is now, or the tombstone of a deleted one. */
export const RequestChange = Type.Union([
  Type.Object(
    {
      id: IdSchema('request'),
      deleted: Type.Literal(false),
      request: RequestDetail,
    },
    {
      additionalProperties: false,
      description: 'A created or changed request, as `GET /v1/requests/:id` shows it to the caller.',
    },
  ),
  Type.Object(
    { id: IdSchema('request'), deleted: Type.Literal(true), deletedAt: DateTimeString() },
    { additionalProperties: false, description: 'A deleted request: drop it from the mirror.' },
  ),
]);
export type RequestChange = Static<typeof RequestChange>;

const RequestChanges = Type.Object(
  {
    changes: Type.Array(RequestChange),
    pagination: Type.Object(
      {
        limit: Type.Integer({ minimum: 1 }),
        nextCursor: Type.String({
          description: 'Always present: poll again with it for the changes after these.',
        }),
        hasMore: Type.Boolean({ description: 'More changes are ready now: call again at once.' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** `GET /v1/requests/deleted`: the trash, newest deletion first, paged by cursor. */
export const DeletedRequestsQuery = Type.Object(
  {
    cursor: resumeCursor(
      'The `nextCursor` of the previous page; without it the list starts at the newest deletion.',
    ),
    limit: Type.Optional(PageQuery.limit),
  },
  { additionalProperties: false },
);
export type DeletedRequestsQuery = Static<typeof DeletedRequestsQuery>;

/** One request in the trash: enough to recognise it, and when it goes for good. */
export const DeletedRequestItem = Type.Object(
  {
    id: IdSchema('request'),
    title: Type.String(),
    status: RequestStatusSchema,
    priority: PrioritySchema,
    requester: RequestUserRef,
    createdAt: DateTimeString(),
    deletedAt: DateTimeString(),
    deletedBy: nullable(Type.String({ description: 'The admin who deleted it.' })),
    purgeAfter: DateTimeString(
      'When the trash period ends: the request, its comments and its attachments (bytes included) ' +
        'are purged for good at the first purge pass after it.',
    ),
    commentCount: Type.Integer({ minimum: 0 }),
    attachmentCount: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type DeletedRequestItem = Static<typeof DeletedRequestItem>;

export const DeletedRequestList = Type.Object(
  {
    deleted: Type.Array(DeletedRequestItem),
    pagination: Type.Object(
      {
        limit: Type.Integer({ minimum: 1 }),
        nextCursor: nullable(Type.String({ description: 'The older deletions; null on the last page.' })),
        hasMore: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** The most requests one bulk job changes. */
export const BULK_JOB_MAX_ITEMS = 1000;
export const BULK_ACTIONS = ['update', 'delete'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

const BulkItem = Type.Object(
  {
    id: IdSchema('request'),
    ifMatch: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'The `ETag` the request must still have (as `If-Match` on a single call): otherwise this item ' +
          'fails with 412 `PRECONDITION_FAILED`.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** `POST /v1/requests/bulk`: one action applied to up to 1,000 requests, each once. */
export const BulkRequestsBody = Type.Object(
  {
    action: StringEnum(BULK_ACTIONS, {
      description:
        '`update`: `changes` applied to each request as `PATCH /v1/requests/:id` would (fields, status, ' +
        'assignment). `delete`: each request moved to the trash as `DELETE /v1/requests/:id` would ' +
        '(scope `admin`).',
    }),
    items: Type.Array(BulkItem, {
      minItems: 1,
      maxItems: BULK_JOB_MAX_ITEMS,
      description: `1 to ${BULK_JOB_MAX_ITEMS} requests, each at most once, changed in this order.`,
    }),
    changes: Type.Optional(UpdateRequestBody),
  },
  { additionalProperties: false },
);
export type BulkRequestsBody = Static<typeof BulkRequestsBody>;

const BulkJob = {
  id: IdSchema('job'),
  action: StringEnum(BULK_ACTIONS),
  status: StringEnum(['running', 'completed'] as const, {
    description:
      '`running` until every item has its result (across restarts of the service), then `completed`.',
  }),
  total: Type.Integer({ minimum: 1 }),
  processed: Type.Integer({ minimum: 0, description: 'Items with a result so far.' }),
  succeeded: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
  createdAt: DateTimeString(),
  completedAt: nullable(DateTimeString()),
};
export const BulkJobAccepted = Type.Object(BulkJob, { additionalProperties: false });

/** One item's outcome: what the single call would have answered. */
export const BulkJobResult = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'The position of the item in `items`.' }),
    id: IdSchema('request'),
    status: StringEnum(['succeeded', 'failed'] as const),
    httpStatus: Type.Integer({ description: 'The status the single call would have answered.' }),
    error: nullable(ErrorBody),
  },
  { additionalProperties: false },
);
export type BulkJobResult = Static<typeof BulkJobResult>;

export const BulkJobView = Type.Object(
  { ...BulkJob, results: Type.Array(BulkJobResult), pagination: Pagination },
  { additionalProperties: false },
);
export type BulkJobView = Static<typeof BulkJobView>;

export const BulkJobParams = Type.Object({ id: IdSchema('job') }, { additionalProperties: false });
export const BulkJobQuery = Type.Object(
  { page: Type.Optional(PageQuery.page), limit: Type.Optional(PageQuery.limit) },
  { additionalProperties: false },
);
export type BulkJobQuery = Static<typeof BulkJobQuery>;

/** Public request/response schemas of the requests service, keyed by route (see PUBLIC_ROUTES). */
export const requestsRouteSchemas = {
  'GET /v1/requests': {
    description:
      'Newest first unless `sort` says otherwise. `limit` above 100 is clamped to 100. Pages by `page` ' +
      '(with a total) or by `cursor` (no total, stable under concurrent inserts, no depth limit); the ' +
      '`Link` header (RFC 8288) carries the `next` and `prev` URIs. Multi-value filters take values ' +
      'separated by commas.',
    querystring: ListRequestsQuery,
    response: { 200: Ok(RequestList) },
  },
  'GET /v1/requests/changes': {
    description:
      'Every request changed after `cursor`, in change order (oldest change first), each once at its ' +
      'latest state; deleted requests as tombstones. Mirror the data set: start without a cursor, ' +
      'apply each change (upsert, or delete a tombstone), call again with `nextCursor` while ' +
      '`hasMore`, then poll with it. Changes appear after a short settle delay (docs/api-guide.md, "Lists").',
    querystring: RequestChangesQuery,
    response: { 200: Ok(RequestChanges) },
  },
  'POST /v1/requests': {
    description: 'The caller is the requester. Status is `assigned` when created with an assignee.',
    body: CreateRequestBody,
    location: '/v1/requests/:id',
    response: { 201: Ok(CreatedRequest) },
  },
  'GET /v1/requests/:id': {
    description: 'Internal comments are shown to agents and admins only.',
    params: SupportRequestParams,
    response: { 200: Ok(RequestDetail) },
  },
  'PATCH /v1/requests/:id': {
    description: 'One event per kind of change. A disallowed status transition answers 409.',
    params: SupportRequestParams,
    body: UpdateRequestBody,
    response: { 200: Ok(UpdatedRequest) },
  },
  'DELETE /v1/requests/:id': {
    description:
      'Moves the request to the trash: it and its attachments then answer 404 and it leaves every list; ' +
      'an admin can restore it (`POST /v1/requests/:id/restore`) until the trash period ends, then it is ' +
      'purged for good. Its audit history stays readable to admins.',
    params: SupportRequestParams,
    response: { 200: Ok(Type.Object({ deleted: Type.Literal(true) }, { additionalProperties: false })) },
  },
  'GET /v1/requests/deleted': {
    description:
      'The trash (admins only): deleted requests that can still be restored, newest deletion first, paged ' +
      'by cursor (`Link` header `next`). A request stays here for the trash period (30 days by default, ' +
      '`TRASH_RETENTION_DAYS`), then it is purged for good with its comments and attachments ' +
      '(`request.purged`). Cost: one read of the requests in the trash (a pushed-down equality), never ' +
      'of the whole store.',
    querystring: DeletedRequestsQuery,
    response: { 200: Ok(DeletedRequestList) },
  },
  'POST /v1/requests/bulk': {
    description:
      'Starts a bulk job (202): `action` applied to each of `items` (1 to 1,000 requests, each once) by ' +
      'a worker, in order. Each item obeys what the single call obeys (scopes, the status workflow, ' +
      '`ifMatch` as `If-Match`, references) and emits the same events; its result is what that call ' +
      "would have answered. The job is stored: it survives a restart of the service and each item's " +
      'change lands exactly once. Follow it with `GET /v1/jobs/:id`. **Cost**: the call counts once ' +
      'per item against the `general` rate bucket (what the same changes one by one would cost), all ' +
      'or nothing: past the remaining budget 429 and no job. `delete` needs the `admin` scope (403).',
    body: BulkRequestsBody,
    response: { 202: Ok(BulkJobAccepted) },
  },
  'GET /v1/jobs/:id': {
    description:
      "A bulk job's progress and its per-item results in item order, paged (`page`, `limit`, default " +
      '20, at most 100). Visible to the caller who started it and to admins (404 to anyone else).',
    params: BulkJobParams,
    querystring: BulkJobQuery,
    response: { 200: Ok(BulkJobView) },
  },
  'POST /v1/requests/:id/restore': {
    description:
      'Restores a deleted request from the trash (admins only) with its comments and attachments, as ' +
      'it was when deleted; emits `request.restored`. Answers the request as `GET /v1/requests/:id` ' +
      'shows it. A request that is not deleted answers 409; one unknown, purged or being purged 404.',
    params: SupportRequestParams,
    response: { 200: Ok(RequestDetail) },
  },
  'POST /v1/requests/:id/comments': {
    description:
      'Only the requester, agents and admins may comment; only agents and admins may post internal notes.',
    params: SupportRequestParams,
    body: AddCommentBody,
    response: { 201: Ok(RequestComment) },
  },
  'GET /v1/requests/:id/comments': {
    description:
      "The request's comments, oldest first unless `sort` says otherwise, each as the single read shows " +
      'it. Internal notes are listed (and counted) for agents and admins only. Pages like the other lists: ' +
      '`page`/`limit` with a total, or `cursor`; the `Link` header carries `next` and `prev`. A deleted ' +
      'request answers 404.',
    params: SupportRequestParams,
    querystring: ListCommentsQuery,
    response: { 200: Ok(CommentList) },
  },
  'POST /v1/requests/:id/attachments': {
    description: 'One file part named `file`; the content type is detected from the bytes.',
    params: SupportRequestParams,
    consumes: ['multipart/form-data'],
    location: '/v1/attachments/:id',
    response: { 201: Ok(UploadedAttachment) },
  },
  'GET /v1/attachments/:id': {
    description:
      'The file bytes as uploaded, served as a download. `Content-Type` is the type detected from the ' +
      'bytes at upload (file-type signatures: `image/png`, `application/pdf`, `application/zip`, …), ' +
      '`application/octet-stream` when none matched (plain text among them); the type the uploader ' +
      'claimed is never used. With `Content-Disposition: attachment` (the original file name), ' +
      "`X-Content-Type-Options: nosniff`, `Content-Security-Policy: default-src 'none'; sandbox` and " +
      '`Cache-Control: private, no-store`.',
    params: AttachmentIdParams,
    produces: ['application/octet-stream', 'application/pdf', 'image/png', 'image/jpeg', '*/*'],
    response: { 200: Type.String({ format: 'binary' }) },
  },
} satisfies RouteSchemaMap;
