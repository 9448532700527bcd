/** What one operation asks of the store (`command collection`, sorted) and how many NATS messages it sends. */
export interface Trips {
  store: string[];
  nats: number;
}

/**
 * The round trips of every public identity operation (round-trips.test.ts measures them; the
 * README's table says the same). NATS 2 = one request-reply (the caller's request, the answer).
 */
export const EXPECTED_TRIPS: Record<string, Trips> = {
  // The list's bounds, then an hour at a time (the walk): here the newest hour holds every match,
  // fewer than a page, so its find is its count.
  'GET /v1/users': { store: ['find listBounds', 'find users'], nats: 0 },
  'GET /v1/users?role&search': { store: ['find listBounds', 'find users'], nats: 0 },
  // A cursor page counts nothing; by name it reads one initial at a time from the cursor's: here
  // the ranks after it up to the last (19 lookups, most of them empty), for lack of a full page.
  'GET /v1/users?role=agent,admin&sort=name&cursor= (cursor mode)': {
    store: Array.from({ length: 19 }, () => 'find users'),
    nats: 0,
  },
  'GET /v1/users/:id': { store: ['find users'], nats: 0 },
  'GET /v1/users/:id (2 group names not remembered)': {
    store: ['find groups', 'find groups', 'find users'],
    nats: 0,
  },
  'POST /v1/users': { store: ['insert user_emails', 'insert users'], nats: 0 },
  'POST /v1/users (with groups)': { store: ['insert user_emails', 'insert users'], nats: 0 },
  'PATCH /v1/users/:id (name)': { store: ['find users', 'update users'], nats: 0 },
  'PATCH /v1/users/:id (groups)': { store: ['find users', 'update users'], nats: 0 },
  'PATCH /v1/users/:id (no change)': { store: ['find users'], nats: 0 },
  'PATCH /v1/users/:id (demote an admin)': {
    store: ['aggregate users', 'find users', 'update users'],
    nats: 0,
  },
  'DELETE /v1/users/:id': {
    store: ['delete oauth_sessions', 'find api_keys', 'find oauth_grants', 'find users', 'update users'],
    nats: 0,
  },
  'GET /v1/me': { store: ['find users'], nats: 0 },
  // The live groups, then one member count per group (two groups here).
  'GET /v1/groups': { store: ['aggregate users', 'aggregate users', 'find groups'], nats: 0 },
  'POST /v1/groups': { store: ['insert groups'], nats: 0 },
  'GET /v1/groups/:id': { store: ['aggregate users', 'find groups'], nats: 0 },
  'PATCH /v1/groups/:id': { store: ['aggregate users', 'find groups', 'update groups'], nats: 0 },
  'GET /v1/groups/:id/members': { store: ['find groups', 'find listBounds', 'find users'], nats: 0 },
  'POST /v1/groups/:id/members': {
    store: ['aggregate users', 'find groups', 'find users', 'update users'],
    nats: 0,
  },
  'POST /v1/groups/:id/members (already a member)': {
    store: ['aggregate users', 'find groups', 'find users'],
    nats: 0,
  },
  'DELETE /v1/groups/:id/members/:userId': {
    store: ['aggregate users', 'find groups', 'find users', 'update users'],
    nats: 0,
  },
  'DELETE /v1/groups/:id (one member)': {
    store: ['find groups', 'find users', 'find users', 'find users', 'update groups', 'update users'],
    nats: 0,
  },
  'GET /oauth/authorize (no session)': { store: ['find oauth_clients'], nats: 0 },
  'POST /oauth/login (wrong password)': {
    store: [
      'find login_attempts',
      'find login_attempts',
      'find user_emails',
      'find users',
      'update login_attempts',
      'update login_attempts',
    ],
    nats: 0,
  },
  'POST /oauth/login': {
    store: [
      'delete login_attempts',
      'find login_attempts',
      'find login_attempts',
      'find user_emails',
      'find users',
      'insert oauth_sessions',
      'update users',
    ],
    nats: 0,
  },
  'GET /oauth/authorize (session: consent)': {
    store: ['find oauth_clients', 'find oauth_sessions', 'find users'],
    nats: 0,
  },
  'POST /oauth/authorize (approve)': {
    store: ['find oauth_clients', 'find oauth_sessions', 'find users', 'insert oauth_grants'],
    nats: 0,
  },
  'POST /oauth/token (authorization_code)': {
    store: ['find oauth_clients', 'find oauth_grants', 'find users', 'update oauth_grants'],
    nats: 0,
  },
  'POST /oauth/token (refresh_token)': {
    store: ['find oauth_clients', 'find oauth_grants', 'find users', 'update oauth_grants'],
    nats: 0,
  },
  'POST /oauth/revoke': {
    store: ['find oauth_clients', 'find oauth_grants', 'update oauth_grants'],
    nats: 0,
  },
  'POST /oauth/logout': { store: ['find users', 'findAndModify oauth_sessions', 'update users'], nats: 0 },
  'rpc resolveApiKey (first use this minute: + lastUsedAt)': {
    store: ['find api_keys', 'find settings', 'find users', 'update api_keys'],
    nats: 2,
  },
  'rpc resolveApiKey': { store: ['find api_keys', 'find settings', 'find users'], nats: 2 },
  'rpc resolveApiKey (unknown key)': { store: ['find api_keys'], nats: 2 },
  'rpc getUser': { store: ['find users'], nats: 2 },
  'rpc getGroup': { store: ['find groups'], nats: 2 },
  'rpc getOAuthClient': { store: ['find oauth_clients'], nats: 2 },
  'rpc getSettings': { store: ['find settings'], nats: 2 },
  'housekeeping pass (the first: in full)': {
    store: ['find login_attempts', 'find oauth_grants', 'find oauth_sessions'],
    nats: 0,
  },
  'housekeeping pass (the next: by due hour)': {
    store: ['find login_attempts', 'find oauth_grants', 'find oauth_sessions'],
    nats: 0,
  },
};
