// Rate limits per plan (spec "Limits"): a Standard key gets exactly 60 general and 30 events calls
// per minute, the headers count down, then 429 RATE_LIMITED with Retry-After.
import t from 'tap';
import { cast, createKey } from '../src/actors.js';
import { type Asserts, expectError, expectOk } from '../src/expect.js';
import { SPEC_PLANS } from '../src/fixtures.js';
import type { HttpResponse } from '../src/http.js';
import { startStack } from '../src/stack.js';
import { createRequest } from '../src/world.js';

const stack = await startStack(t);
const { admin, agent } = await cast(stack);

const header = (res: HttpResponse, name: string) => {
  const v = res.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

/** Makes `limit` calls, checking the headers count down, then one more that must be refused. */
async function exhaust(
  t: Asserts,
  call: (i: number) => Promise<HttpResponse>,
  limit: number,
  bucket: 'general' | 'events',
): Promise<void> {
  let allOk = true;
  let countdown = true;
  let resetOk = true;
  let previousReset = 0;
  for (let i = 0; i < limit; i++) {
    const res = await call(i);
    if (res.status !== 200) {
      allOk = false;
      t.fail(`${bucket} call ${i + 1} of ${limit}: ${res.status} ${res.text.slice(0, 200)}`);
      break;
    }
    const lim = Number(header(res, 'X-RateLimit-Limit'));
    const rem = Number(header(res, 'X-RateLimit-Remaining'));
    const reset = Number(header(res, 'X-RateLimit-Reset'));
    if (lim !== limit || rem !== limit - i - 1) {
      countdown = false;
      t.fail(
        `${bucket} call ${i + 1}: X-RateLimit-Limit ${lim} (want ${limit}), Remaining ${rem} (want ${limit - i - 1})`,
      );
    }
    const now = Date.now() / 1000;
    if (
      !Number.isInteger(reset) ||
      reset < Math.floor(now) ||
      reset > now + 61 ||
      reset < previousReset - 1
    ) {
      resetOk = false;
      t.fail(
        `${bucket} call ${i + 1}: X-RateLimit-Reset ${header(res, 'X-RateLimit-Reset')} is not an epoch second within the window`,
      );
    }
    previousReset = reset;
    if (i === 0) {
      t.ok(header(res, 'RateLimit-Policy'), `RateLimit-Policy header (${header(res, 'RateLimit-Policy')})`);
      t.ok(header(res, 'RateLimit'), `RateLimit header (${header(res, 'RateLimit')})`);
    }
  }
  t.ok(allOk, `${bucket}: ${limit} calls admitted`);
  t.ok(countdown, `${bucket}: X-RateLimit-Limit ${limit}, X-RateLimit-Remaining ${limit - 1} … 0`);
  t.ok(resetOk, `${bucket}: X-RateLimit-Reset is an integer epoch second within the window`);

  const refused = await call(limit);
  expectError(t, refused, 429, 'RATE_LIMITED', `${bucket}: call ${limit + 1}`);
  t.match(refused.json?.error?.message, new RegExp(bucket), `the message names the ${bucket} bucket`);
  const retry = Number(header(refused, 'Retry-After'));
  t.ok(
    Number.isInteger(retry) && retry >= 1 && retry <= 60,
    `Retry-After is whole seconds within the minute (${header(refused, 'Retry-After')})`,
  );
  t.equal(header(refused, 'X-RateLimit-Remaining'), '0', '429 carries X-RateLimit-Remaining 0');
  t.equal(header(refused, 'X-RateLimit-Limit'), String(limit), '429 carries X-RateLimit-Limit');
  const again = await call(limit + 1);
  t.equal(again.status, 429, 'still refused on the next call');
}

t.test('Standard plan: exactly 60 general calls per minute, then 429 with Retry-After', async (t) => {
  const { key } = await createKey(
    stack,
    agent.email,
    ['requests:read', 'requests:write'],
    ['--plan', 'standard'],
    'standard-general',
  );
  const api = stack.api(key);
  // A mix of reads and writes: every /v1 call counts against the general bucket.
  const req = await createRequest(t, agent.api);
  await exhaust(
    t,
    (i) =>
      (i % 10 === 5
        ? api.post(`/v1/requests/${req.id}/comments`, { content: `n${i}` })
        : api.get('/v1/requests?limit=1')
      ).then((r) => (r.status === 201 ? { ...r, status: 200 } : r)),
    SPEC_PLANS.standard.general,
    'general',
  );
  // Counted per key: another Standard key of the same user has its own quota.
  const other = await createKey(
    stack,
    agent.email,
    ['requests:read'],
    ['--plan', 'standard'],
    'standard-other',
  );
  const res = await stack.api(other.key).get('/v1/requests?limit=1');
  expectOk(t, res, 200, 'a second key of the same user is counted separately');
  t.equal(header(res, 'X-RateLimit-Remaining'), String(SPEC_PLANS.standard.general - 1), 'its own countdown');
  // Failed authentication does not consume anyone's quota and is answered 401, not 429.
  expectError(
    t,
    await stack.api(`${key}x`).get('/v1/me'),
    401,
    'UNAUTHORIZED',
    'a wrong key is 401, not 429',
  );
});

t.test('Standard plan: exactly 30 events calls per minute, separate from the general bucket', async (t) => {
  const { key } = await createKey(stack, admin.email, ['admin'], ['--plan', 'standard'], 'standard-events');
  const api = stack.api(key);
  const req = await createRequest(t, admin.api);
  // Both Events API routes share the bucket: /v1/events and /v1/requests/:id/events.
  await exhaust(
    t,
    (i) => (i % 2 === 0 ? api.get('/v1/events?limit=1') : api.get(`/v1/requests/${req.id}/events`)),
    SPEC_PLANS.standard.events,
    'events',
  );
  const general = await api.get('/v1/me');
  expectOk(t, general, 200, 'general calls still allowed once the events bucket is used up');
  t.equal(
    header(general, 'X-RateLimit-Limit'),
    String(SPEC_PLANS.standard.general),
    'general bucket: limit 60',
  );
  t.equal(
    header(general, 'X-RateLimit-Remaining'),
    String(SPEC_PLANS.standard.general - 1),
    'general bucket untouched by events calls',
  );
});

t.test('Professional and default plans announce their limits', async (t) => {
  const pro = await createKey(stack, admin.email, ['admin'], ['--plan', 'professional'], 'pro');
  const g = await stack.api(pro.key).get('/v1/me');
  t.equal(
    header(g, 'X-RateLimit-Limit'),
    String(SPEC_PLANS.professional.general),
    'Professional: 300 general',
  );
  const e = await stack.api(pro.key).get('/v1/events?limit=1');
  t.equal(header(e, 'X-RateLimit-Limit'), String(SPEC_PLANS.professional.events), 'Professional: 120 events');
  const plain = await createKey(stack, admin.email, ['admin'], [], 'no-plan');
  const d = await stack.api(plain.key).get('/v1/me');
  t.equal(
    header(d, 'X-RateLimit-Limit'),
    String(SPEC_PLANS.standard.general),
    'a key without a plan is Standard',
  );
  const ent = await createKey(
    stack,
    admin.email,
    ['admin'],
    ['--plan', 'enterprise', '--rate-limit', '5', '--events-rate-limit', '3'],
    'ent',
  );
  const api = stack.api(ent.key);
  for (let i = 0; i < 3; i++)
    expectOk(t, await api.get('/v1/events?limit=1'), 200, `enterprise events call ${i + 1}`);
  expectError(
    t,
    await api.get('/v1/events?limit=1'),
    429,
    'RATE_LIMITED',
    'Enterprise: the limits set on the key (events 3)',
  );
  for (let i = 0; i < 5; i++) expectOk(t, await api.get('/v1/me'), 200, `enterprise general call ${i + 1}`);
  expectError(
    t,
    await api.get('/v1/me'),
    429,
    'RATE_LIMITED',
    'Enterprise: the limits set on the key (general 5)',
  );
});
