import { CreateUserBody, EventEnvelope, IDENTITY_RPC_REPLIES, UserListQuery } from '@support-desk/contracts';
import t from 'tap';
import { describeSchemaProblem, firstSchemaProblem } from '../src/subpaths/core.js';

// The words TypeBox 0.34 gave these problems, which SCIM clients, deskctl users and operators
// read (TypeBox 1.x words and orders its own errors differently: `must match format "email"`).
const user = { email: 'ada@example.com', name: 'Ada', role: 'agent' };

t.test('the first problem, worded and ordered as before TypeBox 1.x', async (t) => {
  const cases: [unknown, unknown, string | null, string?][] = [
    [CreateUserBody, user, null],
    [CreateUserBody, {}, '/email', 'Expected required property'],
    [CreateUserBody, { ...user, email: 5 }, '/email', 'Expected string'],
    [CreateUserBody, { ...user, email: 'nope' }, '/email', "Expected string to match 'email' format"],
    [CreateUserBody, { ...user, name: '' }, '/name', 'Expected string length greater or equal to 1'],
    [CreateUserBody, { ...user, name: '   ' }, '/name', "Expected string to match '\\S'"],
    [CreateUserBody, { ...user, role: 'king' }, '/role', "Expected kind 'StringEnum'"],
    [CreateUserBody, { ...user, isVip: 'yes' }, '/isVip', 'Expected boolean'],
    [CreateUserBody, { ...user, groups: 'grp_x' }, '/groups', 'Expected array'],
    [
      CreateUserBody,
      { ...user, groups: ['nope'] },
      '/groups/0',
      "Expected string to match '^grp_[0-9a-hjkmnp-tv-z]{26}$'",
    ],
    [CreateUserBody, { ...user, password: 'x' }, '/password', 'Unexpected property'],
    [
      CreateUserBody,
      { ...user, metadata: { constructor: 'x' } },
      '/metadata/constructor',
      'Unexpected property',
    ],
    [CreateUserBody, { ...user, metadata: { k: 5 } }, '/metadata/k', 'Expected string'],
    // Required fields first, then unknown ones, then each field in the schema's order.
    [CreateUserBody, { name: '', extra: 1 }, '/email', 'Expected required property'],
    [CreateUserBody, { ...user, name: '', extra: 1 }, '/extra', 'Unexpected property'],
    [UserListQuery, { limit: 0 }, '/limit', 'Expected integer to be greater or equal to 1'],
    [EventEnvelope, [], '', 'Expected object'],
  ];
  for (const [schema, value, path, message] of cases) {
    const what = JSON.stringify(value);
    const problem = firstSchemaProblem(schema as typeof CreateUserBody, value);
    if (path === null) t.equal(problem, null, `${what}: none`);
    else t.match(problem, { path, message }, `${what}: ${path} ${message}`);
  }
});

t.test('a union names the problem of the alternative that matched furthest', async (t) => {
  const reply = IDENTITY_RPC_REPLIES.getUser;
  const described = (value: unknown) => describeSchemaProblem(firstSchemaProblem(reply, value));
  t.equal(described({ found: true, user: {} }), '/user/id Expected required property');
  t.equal(described({ found: 'yes' }), '/found Expected false');
  t.equal(described(null), '(root) Expected object');
  t.match(firstSchemaProblem(reply, { found: 'yes' }), { path: '', message: 'Expected union value' });
  t.equal(firstSchemaProblem(reply, { found: false }), null);
});
