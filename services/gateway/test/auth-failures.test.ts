import t from 'tap';
import { bearer, harness } from './helpers.js';

// Failed `/v1` authentications are throttled per client address (an IPv6 /64 is one address),
// in Redis, with a limit low enough to reach here.
t.test('failed /v1 authentications are throttled per address', async (t) => {
  const LIMIT = 3;
  const h = await harness(t, { AUTH_FAILURES_PER_IP: LIMIT });
  const { app } = await h.gateway();
  const good = h.identity.addKey(h.identity.addUser('admin')).raw;
  const bad = 'sd_key_00000000000000000000000000_nope';
  const call = (credential: string, remoteAddress: string) =>
    app.inject({ method: 'GET', url: '/v1/me', headers: bearer(credential), remoteAddress });

  t.test('N failures answer 401; the next, and then every call from there, 429', async (t) => {
    const ip = '192.0.2.41';
    for (let i = 1; i <= LIMIT; i++) t.equal((await call(bad, ip)).statusCode, 401, `failure ${i}`);
    const refused = await call(bad, ip);
    t.equal(refused.statusCode, 429, `failure ${LIMIT + 1}`);
    t.equal(refused.json().error.code, 'RATE_LIMITED');
    t.match(refused.json().error.message, /failed authentications/);
    const retry = Number(refused.headers['retry-after']);
    t.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${retry}`);

    const goodWhileBlocked = await call(good, ip);
    t.equal(goodWhileBlocked.statusCode, 429, 'a good key from the blocked address waits too');
    t.ok(goodWhileBlocked.headers['retry-after'], 'with Retry-After');
    t.equal(h.upstreams.identity.calls.length + h.upstreams.requests.calls.length, 0, 'nothing forwarded');

    t.equal((await call(good, '192.0.2.42')).statusCode, 200, 'another address is unaffected');
    t.equal((await call(bad, '192.0.2.42')).statusCode, 401, 'and keeps its own count');
  });

  t.test('two IPv6 addresses in one /64 share the count; another /64 does not', async (t) => {
    for (let i = 1; i <= LIMIT; i++) {
      const ip = i % 2 ? '2001:db8:7:8::1' : '2001:db8:7:8:ffff:ffff:ffff:fffe';
      t.equal((await call(bad, ip)).statusCode, 401, `failure ${i} from ${ip}`);
    }
    t.equal((await call(bad, '2001:db8:7:8:1234::9')).statusCode, 429, 'a third address of the /64');
    t.equal((await call(good, '2001:db8:7:8::1')).statusCode, 429, 'a good key from the /64');
    t.equal((await call(good, '2001:db8:7:9::1')).statusCode, 200, 'the neighbouring /64');
  });

  t.test('a second replica sharing Redis blocks at the first failure it sees past the limit', async (t) => {
    const other = await h.gateway();
    const ip = '192.0.2.43';
    for (let i = 1; i <= LIMIT; i++) t.equal((await call(bad, ip)).statusCode, 401, `failure ${i}`);
    const res = await other.app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: bearer(bad),
      remoteAddress: ip,
    });
    t.equal(res.statusCode, 429, 'the count is shared, not per replica');
  });

  t.test('failed SCIM authentications count too, with /v1, before any body is read', async (t) => {
    const scimToken = (secret: string) => `sdscim_okta_${secret.padEnd(43, 'x')}`;
    const scim = (authorization: string | undefined, remoteAddress: string, payload = '{}') =>
      app.inject({
        method: 'POST',
        url: '/scim/v2/Users',
        headers: {
          ...(authorization ? { authorization } : {}),
          'content-type': 'application/scim+json',
        },
        payload,
        remoteAddress,
      });
    const ip = '192.0.2.44';
    const forwardedBefore = h.upstreams.identity.calls.length;
    let res = await scim(undefined, ip, '{"userName": "a@b.c"}');
    t.equal(res.statusCode, 401, 'no token: refused by the gateway');
    t.match(res.json(), { status: '401' });
    t.equal(h.upstreams.identity.calls.length, forwardedBefore, 'without asking identity');
    res = await scim(`Bearer ${scimToken('wrong')}`, ip);
    t.equal(res.statusCode, 401, "a token identity refuses: identity's 401");
    t.equal((await call(bad, ip)).statusCode, 401, 'a /v1 failure: the third');
    t.equal((await call(bad, ip)).statusCode, 429, 'the fourth: blocked');
    res = await scim(`Bearer ${scimToken('good')}`, ip, 'x'.repeat(200_000));
    t.equal(res.statusCode, 429, 'past the limit even a good token waits, its body unread');
    t.match(res.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '429' });
    t.match(res.json().detail, /failed authentications/);
    t.ok(Number(res.headers['retry-after']) >= 1, 'with Retry-After');
    t.equal((await call(good, ip)).statusCode, 429, 'and /v1 from there too');
    res = await scim(`Bearer ${scimToken('good')}`, '192.0.2.45');
    t.equal(res.statusCode, 200, 'another address is unaffected');
  });
});
