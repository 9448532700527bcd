/**
 * The endpoint tables of the interface spec (../shared/spec/interface.md, "Endpoints"), copied
 * verbatim as a fixture: paths relative to `{base_url}` (= gateway + `/v1`). If the spec changes,
 * this list changes with it; the suite asserts each method + path is served (not 404 / not
 * "route not found").
 */
export const SPEC_ENDPOINTS = [
  // Requests
  { method: 'GET', path: '/requests', table: 'Requests' },
  { method: 'GET', path: '/requests/:id', table: 'Requests' },
  { method: 'POST', path: '/requests', table: 'Requests' },
  { method: 'PATCH', path: '/requests/:id', table: 'Requests' },
  { method: 'DELETE', path: '/requests/:id', table: 'Requests' },
  { method: 'POST', path: '/requests/:id/comments', table: 'Requests' },
  { method: 'POST', path: '/requests/:id/attachments', table: 'Requests' },
  { method: 'GET', path: '/requests/:id/events', table: 'Requests' },
  // Users
  { method: 'GET', path: '/users', table: 'Users' },
  { method: 'GET', path: '/users/:id', table: 'Users' },
  { method: 'POST', path: '/users', table: 'Users' },
  { method: 'PATCH', path: '/users/:id', table: 'Users' },
  { method: 'DELETE', path: '/users/:id', table: 'Users' },
  { method: 'GET', path: '/me', table: 'Users' },
  // Groups
  { method: 'GET', path: '/groups', table: 'Groups' },
  { method: 'GET', path: '/groups/:id/members', table: 'Groups' },
  { method: 'POST', path: '/groups/:id/members', table: 'Groups' },
  { method: 'DELETE', path: '/groups/:id/members/:userId', table: 'Groups' },
  // Events (audit log)
  { method: 'GET', path: '/events', table: 'Events' },
  { method: 'GET', path: '/events/:id', table: 'Events' },
  { method: 'GET', path: '/requests/:id/events', table: 'Events' },
] as const;

/** Addresses the spec names outside the tables: the attachment url and the OAuth endpoints. */
export const SPEC_OTHER_ENDPOINTS = [
  {
    method: 'GET',
    path: '/v1/attachments/:id',
    note: 'Attachment.url = {base_url}/attachments/<attachment_id>',
  },
  { method: 'GET', path: '/oauth/authorize', note: 'Authentication, OAuth 2.0 step 1' },
  { method: 'POST', path: '/oauth/token', note: 'Authentication, OAuth 2.0 steps 3 and 5' },
] as const;

/** The spec's rate limit table (requests per minute). */
export const SPEC_PLANS = {
  standard: { general: 60, events: 30 },
  professional: { general: 300, events: 120 },
} as const;

/** A well-formed id of each kind that exists nowhere (for 404 checks). */
export const ABSENT = {
  request: 'req_00000000000000000000000000',
  user: 'usr_00000000000000000000000000',
  group: 'grp_00000000000000000000000000',
  event: 'evt_00000000000000000000000000',
  attachment: 'att_00000000000000000000000000',
  webhook: 'whk_00000000000000000000000000',
  delivery: 'dlv_00000000000000000000000000',
} as const;
