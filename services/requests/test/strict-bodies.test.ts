import t from 'tap';
import { requestModel } from '../src/store/requests.js';
import { harness, validBody } from './helpers.js';

// JSON bodies are not coerced: a value of the wrong JSON type is refused, never converted.
t.test('a body value of the wrong JSON type is a 400, never converted, and nothing is written', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const model = requestModel(h.conn);

  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['a number for a string', validBody({ title: 123 }), 'body.title', /must be a string/],
    ['a string for an array', validBody({ tags: 'vpn' }), 'body.tags', /must be an array/],
    ['null for a string', validBody({ title: null }), 'body.title', /must be a string/],
    ['a number in an array of strings', validBody({ tags: ['vpn', 7] }), 'body.tags.1', /must be a string/],
    [
      'a malformed id',
      validBody({ assignedTo: 'bob' }),
      'body.assignedTo',
      /must be a user id such as usr_\w{26}/,
    ],
  ];
  for (const [name, body, field, message] of cases) {
    const res = await h.call(agent.principal, 'POST', '/v1/requests', body);
    t.equal(res.status, 400, name);
    t.equal(res.body.error.code, 'VALIDATION_ERROR', name);
    t.match(res.body.error.details, [{ field, message }], `${name}: named in details`);
  }
  t.equal(await model.countDocuments({}), 0, 'nothing written');

  const created = await h.call(agent.principal, 'POST', '/v1/requests', validBody());
  const id = created.body.data.id;
  const internal = await h.call(agent.principal, 'POST', `/v1/requests/${id}/comments`, {
    content: 'Looks like the VPN',
    isInternal: 'true',
  });
  t.equal(internal.status, 400, '"isInternal": "true" is not a boolean');
  t.match(internal.body.error.details, [{ field: 'body.isInternal', message: 'must be a boolean' }]);
  const read = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.same(read.body.data.comments, [], 'no comment was added');
});

t.test('every problem of a body is listed at once, with the request id', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const res = await h.call(agent.principal, 'POST', '/v1/requests', {
    title: 42,
    priority: 'urgent',
    tags: 'vpn',
    colour: 'red',
  });
  t.equal(res.status, 400);
  const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
  t.same(fields, ['body.colour', 'body.description', 'body.priority', 'body.tags', 'body.title']);
  const priority = res.body.error.details.find((d: { field: string }) => d.field === 'body.priority');
  t.equal(priority.message, 'must be one of: critical, high, medium, low', 'says what would be valid');
  for (const field of fields) t.match(res.body.error.message, field, `the message names ${field} too`);
  t.equal(res.body.error.requestId, res.headers['x-request-id'], 'error.requestId is the X-Request-Id');
});

t.test('query strings still convert from text; nullable fields take null', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const created = await h.call(
    agent.principal,
    'POST',
    '/v1/requests',
    validBody({ assignedTo: agent.user.id }),
  );
  t.equal(created.status, 201);
  const list = await h.call(agent.principal, 'GET', '/v1/requests?limit=5&page=1');
  t.equal(list.status, 200, 'limit and page are read from text');
  t.equal(list.body.data.pagination.limit, 5);
  const unassigned = await h.call(agent.principal, 'PATCH', `/v1/requests/${created.body.data.id}`, {
    assignedTo: null,
  });
  t.equal(unassigned.status, 200, 'null clears a field documented as nullable');
});
