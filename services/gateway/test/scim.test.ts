import { AUTHENTICATED_SCIM_HEADER, PRINCIPAL_HEADER } from '@support-desk/contracts';
import t from 'tap';
import { type EchoCall, GOOD_SCIM_SECRET, harness } from './helpers.js';

const token = (name: string, good = true) =>
  `sdscim_${name}_${(good ? GOOD_SCIM_SECRET : 'bad0').padEnd(43, 'x')}`;

t.test('/scim/v2/* goes to identity with the token, its own limit per connection', async (t) => {
  const h = await harness(t, { SCIM_RATE_LIMIT: 3 });
  const gw = await h.gateway();
  const call = (name: string, good = true, url = '/scim/v2/Users?filter=userName%20eq%20%22a%40b.c%22') =>
    gw.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${token(name, good)}`, [PRINCIPAL_HEADER]: 'forged' },
    });

  let res = await call('okta');
  t.equal(res.statusCode, 200);
  const echo = res.json().data as EchoCall;
  t.equal(echo.service, 'identity');
  t.equal(echo.url, '/scim/v2/Users?filter=userName%20eq%20%22a%40b.c%22', 'path and query as sent');
  t.equal(echo.headers.authorization, `Bearer ${token('okta')}`, 'identity checks the token itself');
  t.notOk(echo.headers[PRINCIPAL_HEADER], 'internal headers are stripped');
  t.match(echo.forwarded, { clientIp: '127.0.0.1' }, "the client's address in the forwarding assertion");
  t.notOk(res.headers[AUTHENTICATED_SCIM_HEADER], "identity's note stays inside");

  const posted = await gw.app.inject({
    method: 'POST',
    url: '/scim/v2/Users',
    headers: { authorization: `Bearer ${token('okta')}`, 'content-type': 'application/scim+json' },
    payload: JSON.stringify({ userName: 'a@example.com' }),
  });
  t.equal((posted.json().data as EchoCall).bodyBytes, JSON.stringify({ userName: 'a@example.com' }).length);
  t.equal((posted.json().data as EchoCall).bodyBinding, 'digest', 'the forwarding assertion binds the body');
  for (const type of ['application/json', 'application/json; charset=utf-8']) {
    const plain = await gw.app.inject({
      method: 'POST',
      url: '/scim/v2/Users',
      headers: { authorization: `Bearer ${token('plain')}`, 'content-type': type },
      payload: JSON.stringify({ userName: 'a@example.com' }),
    });
    t.equal(
      (plain.json().data as EchoCall).bodyBytes,
      JSON.stringify({ userName: 'a@example.com' }).length,
      `an ${type} body goes as sent (not JSON-encoded again)`,
    );
  }

  for (let i = 0; i < 5; i++) {
    res = await call('okta', false);
    t.not(res.statusCode, 429, 'tokens identity refuses do not spend the connection budget');
  }
  res = await call('okta');
  t.equal(res.statusCode, 200, 'the third authenticated call');
  t.equal(res.headers['x-ratelimit-limit'], '3');
  res = await call('okta');
  t.equal(res.statusCode, 429);
  t.match(res.headers['content-type'], /application\/scim\+json/);
  t.match(res.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '429' });
  t.ok(Number(res.headers['retry-after']) >= 1);
  res = await call('entra');
  t.equal(res.statusCode, 200, 'another connection has its own budget');
});
