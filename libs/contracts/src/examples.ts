import type { ErrorCode } from './envelope.js';

/**
 * Examples of every public route, keyed like the RouteSchemaMaps (`"<METHOD> <path>"`): the one
 * place the OpenAPI document (and so the /docs reference) takes its request and response examples
 * from. The gateway's OpenAPI test checks that every PUBLIC_ROUTES entry has one and that each
 * validates against the route's schema, so a new route cannot be published without them.
 */
export interface RouteExamples {
  /**
   * The body of a call (routes with a body): JSON, or the multipart fields of an upload. /docs
   * fills "Try it out" with it, so it must succeed as shown on a fresh stack: it names no other
   * resource (a group, an assignee) unless the route cannot do without one (a membership's user).
   */
  request?: unknown;
  /** The body of the success answer (its status is the route's success status). */
  response: unknown;
  /**
   * The errors this route's service answers beyond the ones every route shares (validation,
   * credentials, scope, rate limit, unavailability), by status, each as its envelope's error.
   */
  errors?: Partial<Record<number, ErrorExample>>;
}

export interface ErrorExample {
  code: ErrorCode;
  message: string;
  details?: { field: string; message: string }[];
}

const REQ = 'req_01j9zq3k4m5n6p7q8r9s0t1v2w';
const CMT = 'cmt_01j9zq5b7c8d9e0f1g2h3j4k5m';
const ATT = 'att_01j9zq6a1b2c3d4e5f6g7h8j9k';
const USR = 'usr_01j9zp0a1b2c3d4e5f6g7h8j9k';
const AGENT = 'usr_01j9zp1m2n3p4q5r6s7t8v9w0x';
const GRP = 'grp_01j9zn8a1b2c3d4e5f6g7h8j9k';
const EVT = 'evt_01j9zq3k4n0a1b2c3d4e5f6g7h';
const CREATED = '2025-03-14T09:26:53.589Z';
const UPDATED = '2025-03-14T10:02:11.204Z';
const CURSOR = 'eyJ2IjoxLCJzIjoiLWNyZWF0ZWRBdCJ9';

const requester = { id: USR, email: 'dana@example.com', name: 'Dana Reyes' };
const agent = { id: AGENT, email: 'sam@example.com', name: 'Sam Okafor' };
const group = { id: GRP, name: 'Network' };
const ok = (data: unknown) => ({ success: true, data });
const page = (total: number) => ({
  page: 1,
  limit: 20,
  total,
  pages: Math.ceil(total / 20),
  nextCursor: total > 20 ? CURSOR : null,
});

const requestCore = {
  id: REQ,
  title: 'VPN drops every 10 minutes',
  description: 'Since Monday the VPN client disconnects every 10 minutes on the office Wi-Fi.',
  status: 'assigned',
  priority: 'high',
  category: 'network',
  createdAt: CREATED,
  updatedAt: UPDATED,
};
const comment = {
  id: CMT,
  content: 'Could you send the client log from the last disconnect?',
  author: { id: AGENT, name: agent.name },
  isInternal: false,
  createdAt: UPDATED,
};
const attachment = {
  id: ATT,
  filename: 'vpn-client.log.gz',
  size: 48213,
  contentType: 'application/gzip',
  uploadedAt: UPDATED,
  url: `/v1/attachments/${ATT}`,
};
const groupRef = { id: GRP, name: 'Network' };
const createdUser = {
  ...agent,
  role: 'agent',
  status: 'active',
  isVip: false,
  groups: [groupRef],
  createdAt: CREATED,
};
const userItem = { ...createdUser, lastLoginAt: UPDATED };
const groupDetail = {
  ...group,
  description: 'Wi-Fi, VPN and office network',
  memberCount: 4,
  createdAt: CREATED,
  updatedAt: UPDATED,
};
const actor = { id: AGENT, name: agent.name, email: agent.email };

const requestDetail = {
  ...requestCore,
  tags: ['vpn', 'wifi'],
  assignedTo: agent,
  assignedGroup: group,
  requester: { ...requester, isVip: false },
  sla: {
    tier: 'standard:high',
    responseTarget: '2025-03-14T13:26:53.589Z',
    resolutionTarget: '2025-03-15T09:26:53.589Z',
    responseStatus: 'met',
    resolutionStatus: 'on_track',
    policy: null,
    response: { state: 'stopped', breachAt: null, remainingSeconds: null },
    resolution: { state: 'running', breachAt: '2025-03-15T09:26:53.589Z', remainingSeconds: 71_400 },
  },
  comments: [comment],
  attachments: [attachment],
};

const { comments: _comments, attachments: _attachments, ...requestFields } = requestDetail;
const statusChanged = {
  id: EVT,
  type: 'request.status_changed',
  resourceType: 'request',
  resourceId: REQ,
  actor,
  changes: { status: { from: 'open', to: 'assigned' } },
  timestamp: UPDATED,
  ipAddress: '203.0.113.7',
  // What every request event carries: the request right after the change, comments as a count.
  snapshot: { ...requestFields, commentCount: 1, attachmentCount: 1 },
};

const WHK = 'whk_01j9zr0a1b2c3d4e5f6g7h8j9k';
const DLV = 'dlv_01j9zq3k4n0a1b2c3d4e5f6g7h';
const webhook = {
  id: WHK,
  url: 'https://hooks.example.com/support-desk',
  events: ['request.*'],
  description: 'Mirror requests into the ops board',
  active: true,
  disabledReason: null,
  disabledAt: null,
  previousSecretExpiresAt: null,
  createdAt: CREATED,
  updatedAt: CREATED,
};
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const delivery = {
  id: DLV,
  webhookId: WHK,
  eventId: EVT,
  eventType: 'request.status_changed',
  status: 'pending',
  attempts: [{ at: UPDATED, status: 503, error: null, durationMs: 41 }],
  nextAttemptAt: '2025-03-14T10:02:16.911Z',
  createdAt: UPDATED,
};
const notFound = (what: string): ErrorExample => ({ code: 'NOT_FOUND', message: `${what} not found` });
const conflict = (message: string): ErrorExample => ({ code: 'CONFLICT', message });
const forbidden = (message: string): ErrorExample => ({ code: 'FORBIDDEN', message });
const PROVIDER_OWNED = conflict(
  'Group Network is managed by identity provider "okta": members can only be changed there',
);

const SLP = 'slp_01j9zr0a1b2c3d4e5f6g7h8j9k';
const officeTargets = (firstResponseMinutes: number, resolutionMinutes: number) => ({
  firstResponseMinutes,
  resolutionMinutes,
});
const slaPolicy = {
  id: SLP,
  name: 'office-hours',
  description: 'Berlin office hours; waiting on the customer pauses the clocks',
  position: 0,
  match: { priorities: ['critical', 'high'] },
  targets: {
    critical: officeTargets(30, 240),
    high: officeTargets(60, 480),
    medium: officeTargets(240, 1440),
    low: officeTargets(480, 2880),
  },
  calendar: {
    timeZone: 'Europe/Berlin',
    hours: [{ days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], from: '09:00', to: '17:00' }],
    holidays: ['2025-12-25', '2025-12-26'],
  },
  pauseStatuses: ['pending'],
  createdAt: CREATED,
  updatedAt: UPDATED,
};
const fallbackRow = (r: number, s: number) => ({ firstResponseMinutes: r, resolutionMinutes: s });

export const ROUTE_EXAMPLES: Record<string, RouteExamples> = {
  'GET /v1/sla-policies': {
    response: ok({
      policies: [slaPolicy],
      fallback: {
        standard: {
          critical: fallbackRow(60, 240),
          high: fallbackRow(240, 1440),
          medium: fallbackRow(480, 4320),
          low: fallbackRow(1440, 7200),
        },
        vip: {
          critical: fallbackRow(30, 120),
          high: fallbackRow(120, 720),
          medium: fallbackRow(240, 2160),
          low: fallbackRow(720, 3600),
        },
      },
    }),
  },
  'POST /v1/sla-policies': {
    request: {
      name: slaPolicy.name,
      description: slaPolicy.description,
      match: slaPolicy.match,
      targets: slaPolicy.targets,
      calendar: slaPolicy.calendar,
    },
    response: ok({ ...slaPolicy, updatedAt: CREATED }),
  },
  'GET /v1/sla-policies/:id': { response: ok(slaPolicy), errors: { 404: notFound('SLA policy') } },
  'PATCH /v1/sla-policies/:id': {
    request: { pauseStatuses: ['pending', 'assigned'] },
    response: ok({ ...slaPolicy, pauseStatuses: ['pending', 'assigned'] }),
    errors: { 404: notFound('SLA policy') },
  },
  'DELETE /v1/sla-policies/:id': {
    response: ok({ id: SLP, deleted: true }),
    errors: { 404: notFound('SLA policy') },
  },
  'GET /v1/requests': {
    response: ok({
      requests: [{ ...requestCore, assignedTo: AGENT, assignedGroup: GRP, requester }],
      pagination: page(1),
    }),
  },
  'POST /v1/requests': {
    request: {
      title: requestCore.title,
      description: requestCore.description,
      priority: 'high',
      category: 'network',
      tags: ['vpn', 'wifi'],
    },
    response: ok({ id: REQ, title: requestCore.title, status: 'open', createdAt: CREATED }),
  },
  'GET /v1/requests/changes': {
    response: ok({
      changes: [
        { id: REQ, deleted: false, request: requestDetail },
        { id: 'req_01jd2k9w8v7t6s5r4q3p2n1m0k', deleted: true, deletedAt: UPDATED },
      ],
      pagination: { limit: 100, nextCursor: CURSOR, hasMore: false },
    }),
  },
  'GET /v1/requests/deleted': {
    response: ok({
      deleted: [
        {
          id: REQ,
          title: requestDetail.title,
          status: 'open',
          priority: 'high',
          requester,
          createdAt: CREATED,
          deletedAt: UPDATED,
          deletedBy: 'usr_01j9zq3k4m5n6p7q8r9s0t1v2a',
          purgeAfter: '2025-04-13T10:02:11.204Z',
          commentCount: 2,
          attachmentCount: 1,
        },
      ],
      pagination: { limit: 20, nextCursor: null, hasMore: false },
    }),
  },
  'POST /v1/requests/bulk': {
    request: {
      action: 'update',
      // One item: "Try it out" fills in a request of the caller's, and an id listed twice is refused.
      items: [{ id: REQ }],
      changes: { assignedGroup: 'grp_01j9zq3k4m5n6p7q8r9s0t1v2x', status: 'in_progress' },
    },
    response: ok({
      id: 'job_01j9zq3k4m5n6p7q8r9s0t1v2j',
      action: 'update',
      status: 'running',
      total: 1,
      processed: 0,
      succeeded: 0,
      failed: 0,
      createdAt: CREATED,
      completedAt: null,
    }),
    errors: { 403: forbidden('This operation requires the admin scope') },
  },
  'GET /v1/jobs/:id': {
    response: ok({
      id: 'job_01j9zq3k4m5n6p7q8r9s0t1v2j',
      action: 'update',
      status: 'completed',
      total: 2,
      processed: 2,
      succeeded: 1,
      failed: 1,
      createdAt: CREATED,
      completedAt: UPDATED,
      results: [
        { index: 0, id: REQ, status: 'succeeded', httpStatus: 200, error: null },
        {
          index: 1,
          id: 'req_01jd2k9w8v7t6s5r4q3p2n1m0k',
          status: 'failed',
          httpStatus: 412,
          error: { code: 'PRECONDITION_FAILED', message: 'The request has changed since the tag was issued' },
        },
      ],
      pagination: { page: 1, limit: 20, total: 2, pages: 1 },
    }),
    errors: { 404: notFound('Job') },
  },
  'POST /v1/requests/:id/restore': {
    response: ok(requestDetail),
    errors: { 404: notFound('Request'), 409: conflict('Request is not deleted') },
  },
  'GET /v1/requests/:id': {
    response: ok(requestDetail),
    errors: { 404: notFound('Request') },
  },
  'PATCH /v1/requests/:id': {
    request: { status: 'resolved', resolution: 'Updated the VPN client to 5.2; no drops since.' },
    response: ok({ id: REQ, status: 'resolved', updatedAt: UPDATED }),
    errors: {
      404: notFound('Request'),
      409: conflict('Status transition from closed to in_progress is not allowed'),
    },
  },
  'DELETE /v1/requests/:id': {
    response: ok({ deleted: true }),
    errors: { 404: notFound('Request') },
  },
  'POST /v1/requests/:id/comments': {
    request: { content: comment.content, isInternal: false },
    response: ok(comment),
    errors: {
      403: forbidden('Only agents and admins may add internal notes'),
      404: notFound('Request'),
      409: conflict('A request holds at most 1000 comments'),
    },
  },
  'GET /v1/requests/:id/comments': {
    response: ok({ comments: [comment], pagination: page(1) }),
    errors: { 404: notFound('Request') },
  },
  'POST /v1/requests/:id/attachments': {
    request: { file: '<the bytes of vpn-client.log.gz>' },
    response: ok({ id: ATT, filename: attachment.filename, size: attachment.size, url: attachment.url }),
    errors: {
      403: forbidden('Only the requester, agents and admins may attach files'),
      404: notFound('Request'),
      409: conflict('A request holds at most 100 attachments'),
      413: {
        code: 'PAYLOAD_TOO_LARGE',
        message: 'body.file exceeds the maximum attachment size of 26214400 bytes',
      },
      415: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the file as multipart/form-data' },
    },
  },
  'GET /v1/attachments/:id': {
    response: '<the bytes of the file, with the content type detected at upload>',
    errors: { 404: notFound('Attachment') },
  },
  'GET /v1/requests/:id/events': {
    response: ok({
      events: [
        {
          id: EVT,
          type: statusChanged.type,
          timestamp: UPDATED,
          actor,
          changes: statusChanged.changes,
        },
      ],
    }),
    errors: { 404: notFound('Request') },
  },
  'GET /v1/users': {
    response: ok({ users: [userItem], pagination: page(1) }),
  },
  'POST /v1/users': {
    request: { email: agent.email, name: agent.name, role: 'agent', isVip: false },
    response: ok({ ...createdUser, groups: [] }),
    errors: { 409: conflict(`A user with email ${agent.email} already exists`) },
  },
  'GET /v1/users/:id': {
    response: ok({
      ...userItem,
      updatedAt: UPDATED,
      identityProvider: 'local',
      metadata: { team: 'emea' },
      deactivatedAt: null,
    }),
    errors: { 404: notFound('User') },
  },
  'PATCH /v1/users/:id': {
    request: { role: 'admin', isVip: true },
    response: ok({ id: AGENT, role: 'admin', isVip: true, updatedAt: UPDATED }),
    errors: {
      404: notFound('User'),
      409: conflict('The last active admin cannot be demoted or deactivated'),
    },
  },
  'DELETE /v1/users/:id': {
    response: ok({ id: AGENT, status: 'inactive', deactivatedAt: UPDATED }),
    errors: { 404: notFound('User'), 409: PROVIDER_OWNED },
  },
  'GET /v1/me': {
    response: ok({
      ...agent,
      role: 'agent',
      status: 'active',
      isVip: false,
      groups: [groupRef],
      permissions: ['requests:read', 'requests:write'],
      scopes: ['requests:read', 'requests:write'],
      credential: { type: 'api_key', id: 'key_01j9zp2a1b2c3d4e5f6g7h8j9k' },
    }),
  },
  'GET /v1/groups': {
    response: ok({ groups: [{ ...group, description: groupDetail.description, memberCount: 4 }] }),
  },
  'POST /v1/groups': {
    request: { name: group.name, description: groupDetail.description },
    response: ok({ ...groupDetail, memberCount: 0 }),
    errors: { 409: conflict(`A group named "${group.name}" already exists`) },
  },
  'GET /v1/groups/:id': {
    response: ok(groupDetail),
    errors: { 404: notFound('Group') },
  },
  'PATCH /v1/groups/:id': {
    request: { description: 'Wi-Fi, VPN, office network and printers' },
    response: ok({ ...groupDetail, description: 'Wi-Fi, VPN, office network and printers' }),
    errors: { 404: notFound('Group'), 409: conflict(`A group named "${group.name}" already exists`) },
  },
  'DELETE /v1/groups/:id': {
    response: ok({ id: GRP, deleted: true }),
    errors: { 404: notFound('Group'), 409: PROVIDER_OWNED },
  },
  'GET /v1/groups/:id/members': {
    response: ok({ users: [userItem], pagination: page(1) }),
    errors: { 404: notFound('Group') },
  },
  'POST /v1/groups/:id/members': {
    request: { userId: AGENT },
    response: ok({ id: GRP, name: group.name, memberCount: 5 }),
    errors: { 404: notFound('User'), 409: PROVIDER_OWNED },
  },
  'DELETE /v1/groups/:id/members/:userId': {
    response: ok({ id: GRP, name: group.name, memberCount: 3 }),
    errors: { 404: notFound('Group'), 409: PROVIDER_OWNED },
  },
  'GET /v1/events': {
    response: ok({ events: [statusChanged], pagination: { ...page(1), hasMore: false } }),
  },
  'GET /v1/events/export': {
    // One line of the NDJSON stream (an event line; the last line is {type: 'end', …}).
    response: { ...statusChanged, cursor: CURSOR },
  },
  'GET /v1/events/:id': {
    response: ok({
      ...statusChanged,
      actor: { ...actor, role: 'agent' },
      metadata: {
        userAgent: 'curl/8.5.0',
        source: 'api',
        requestId: '5b0e6f8c-3c1d-4f7a-9a52-0d9f3c2b7e41',
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      },
    }),
    errors: { 404: notFound('Event') },
  },
  'GET /v1/webhooks': {
    response: ok({ webhooks: [webhook], pagination: page(1) }),
  },
  'POST /v1/webhooks': {
    request: { url: webhook.url, events: webhook.events, description: webhook.description },
    response: ok({ ...webhook, secret: SECRET }),
  },
  'GET /v1/webhooks/:id': {
    response: ok(webhook),
    errors: { 404: notFound('Webhook') },
  },
  'PATCH /v1/webhooks/:id': {
    request: { events: ['request.*', 'user.created'] },
    response: ok({ ...webhook, events: ['request.*', 'user.created'], updatedAt: UPDATED }),
    errors: { 404: notFound('Webhook') },
  },
  'DELETE /v1/webhooks/:id': {
    response: ok({ id: WHK, deleted: true }),
    errors: { 404: notFound('Webhook') },
  },
  'POST /v1/webhooks/:id/rotate-secret': {
    response: ok({
      ...webhook,
      secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
      previousSecretExpiresAt: '2025-03-15T10:02:11.204Z',
      updatedAt: UPDATED,
    }),
    errors: { 404: notFound('Webhook') },
  },
  'POST /v1/webhooks/:id/ping': {
    response: ok({
      ...delivery,
      eventId: null,
      eventType: 'webhook.ping',
      attempts: [],
      nextAttemptAt: UPDATED,
    }),
    errors: { 404: notFound('Webhook') },
  },
  'GET /v1/webhooks/:id/deliveries': {
    response: ok({ deliveries: [delivery], pagination: page(1) }),
    errors: { 404: notFound('Webhook') },
  },
  'POST /v1/webhooks/:id/deliveries/:deliveryId/replay': {
    response: ok({ ...delivery, nextAttemptAt: UPDATED }),
    errors: { 404: notFound('Delivery') },
  },
};
