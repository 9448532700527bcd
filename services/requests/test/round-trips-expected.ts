/**
 * The round trips of each public operation of the requests service, as README's table states them
 * (round-trips.test.ts checks every row). `call`: the store commands the call waits for (`command
 * collection`, sorted), and `nats`: the messages it sends (subjects under the namespace); `relay`
 * and `published`: the outbox relay's work after the call, in the background (sorted too).
 */
export interface ExpectedTrips {
  call: string[];
  nats?: string[];
  relay?: string[];
  published?: string[];
}

const relayed = (...events: string[]) => ({
  // The relay publishes the entries the write noted, without reading the document back.
  relay: ['update requests'],
  published: events.map((e) => `events.${e}`),
});
const alertsRelayed = (n: number) => ({
  // The alerts published together are cleaned up in one bulk write.
  relay: ['update sla_alerts'],
  published: Array.from({ length: n }, () => 'events.system.sla_warning'),
});
const readRequest = ['find requests'];
/**
 * A page-mode list over `hours` hours: the bounds, then a find per hour and a count where the find
 * filled the page (fewer found are all the hour holds).
 */
const listed = (hours: number, counted = 0) =>
  [
    'find listBounds',
    ...Array.from({ length: hours }, () => 'find requests'),
    ...Array.from({ length: counted }, () => 'aggregate requests'),
  ].sort();
const readAndWrite = ['find requests', 'update requests'];
const gridFsChunks = (n: number) => Array.from({ length: n }, () => 'insert attachments.chunks');

export const EXPECTED: Record<string, ExpectedTrips> = {
  'POST /v1/requests (requester not yet in the read model)': {
    // The SLA policies to pick from: read on the first create, then kept (SLA_POLICY_CACHE_TTL_MS);
    // the lists' spans (creation, change: walk-bounds.ts) widened to this hour: once an hour per process.
    call: [
      'find sla_policies',
      'find users_read_model',
      'insert requests',
      'update listBounds',
      'update listBounds',
      'update users_read_model',
    ],
    nats: ['rpc.identity.user.get'],
    ...relayed('request.created'),
  },
  'POST /v1/requests': { call: ['insert requests'], ...relayed('request.created') },
  'POST /v1/requests with assignee and group (first sight of both)': {
    call: [
      'find groups_read_model',
      'find users_read_model',
      'insert requests',
      'update groups_read_model',
      'update users_read_model',
    ],
    nats: ['rpc.identity.group.get', 'rpc.identity.user.get'],
    ...relayed('request.assigned', 'request.created'),
  },
  'PATCH /v1/requests/:id assign (assignee and group known)': {
    call: readAndWrite,
    ...relayed('request.assigned', 'request.status_changed'),
  },
  'PATCH /v1/requests/:id status': { call: readAndWrite, ...relayed('request.status_changed') },
  'PATCH /v1/requests/:id changing nothing': { call: readRequest },
  'POST /v1/requests/:id/comments (first response)': {
    call: readAndWrite,
    ...relayed('request.comment_added'),
  },
  'POST /v1/requests/:id/comments': { call: readAndWrite, ...relayed('request.comment_added') },
  'POST /v1/requests/:id/attachments (the first of this process, 300 kB)': {
    // The driver's GridFS stream checks its indexes once per process (find + listIndexes). The
    // upload's assertion is spent first (its one-time id: one insert).
    call: [
      'insert spent_assertion_ids',
      'find attachments.files',
      ...gridFsChunks(2),
      'insert attachments.files',
      'listIndexes attachments.chunks',
      'listIndexes attachments.files',
      ...readAndWrite,
    ].sort(),
    ...relayed('request.attachment_added'),
  },
  'POST /v1/requests/:id/attachments (300 kB)': {
    call: [
      'insert spent_assertion_ids',
      ...gridFsChunks(2),
      'insert attachments.files',
      ...readAndWrite,
    ].sort(),
    ...relayed('request.attachment_added'),
  },
  'GET /v1/requests/:id (a comment author not in the read model)': {
    call: ['find requests', 'find users_read_model'],
  },
  'GET /v1/requests/:id': { call: readRequest },
  'GET /v1/requests/:id on a replica that has not seen these users and group': {
    call: [
      'find groups_read_model',
      'find requests',
      'find users_read_model',
      'find users_read_model',
      'find users_read_model',
    ],
  },
  'PATCH /v1/requests/:id on a replica that has not seen its people (the snapshot)': {
    call: [
      'find groups_read_model',
      'find requests',
      'find users_read_model',
      'find users_read_model',
      // The first change of this process in this hour widens the list bounds.
      'update listBounds',
      'update requests',
    ],
    ...relayed('request.updated'),
  },
  // The list's bounds by `_id`, then per hour (all of these requests are in one): a find, and a
  // count when it filled the page.
  'GET /v1/requests?status=in_progress': { call: listed(1) },
  'GET /v1/requests (page 1 of all)': { call: listed(1) },
  'GET /v1/requests?limit=2 (page mode, with nextCursor)': { call: listed(1, 1) },
  // A cursor page counts nothing: one find per hour, after the keyset position.
  'GET /v1/requests?cursor= (cursor mode)': { call: ['find listBounds', 'find requests'] },
  // One hour per severity.
  // Two statuses are read as an equality each (the local store pushes neither `$in` down), in
  // each of the four priorities' steps: eight finds, merged in list order.
  'GET /v1/requests?q=printer&status=open,in_progress&sort=-priority': { call: listed(8) },
  'GET /v1/requests?requester=&tags= (equalities the store serves from an index)': { call: listed(1) },
  // The request by `_id` (its comments live in it); the authors from the directory memory.
  'GET /v1/requests/:id/comments (authors cached)': { call: readRequest },
  // One find; each request's people come from the directory memory like a single read's.
  'GET /v1/requests/changes (people cached)': { call: ['find requests'] },
  'GET /v1/attachments/:id': {
    call: ['find attachments.chunks', 'find attachments.files', 'find requests'],
  },
  'DELETE /v1/requests/:id': { call: readAndWrite, ...relayed('request.deleted') },
  'GET /v1/requests/:id (deleted: 404)': { call: readRequest },
  'GET /v1/attachments/:id (request deleted: 404)': { call: ['find attachments.files', 'find requests'] },
  'SLA monitor, first pass (full scan), nothing due': {
    call: ['find requests', 'find requests', 'find requests', 'find requests'],
  },
  'SLA monitor, next pass (by minute), nothing due': { call: ['find requests', 'find requests'] },
  'SLA monitor, next pass (by minute, three minutes), two warnings due': {
    // Per warning: claim (insert) and marker (read and write).
    call: [
      ...['find requests', 'find requests', 'find requests'],
      ...['insert sla_alerts', ...readAndWrite],
      ...['insert sla_alerts', ...readAndWrite],
    ].sort(),
    ...alertsRelayed(2),
  },
};
