import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONSOLE_ROUTES, OAUTH_ROUTES, PUBLIC_ROUTES, SCOPES } from '@support-desk/contracts';
import t, { type Test } from 'tap';
import { bearer, type EchoCall, GOOD_SCIM_SECRET, harness } from './helpers.js';

const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, (_m, name) => `${name}_1`);

/** Sends the path exactly as written (no URL normalisation, unlike `inject` or `fetch`). */
function send(port: number, method: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(method === 'POST' || method === 'PATCH' ? '{}' : undefined);
  });
}

/** Spellings of one path that parsers disagree on, or that name it differently. */
function variants(path: string): { path: string; kind: string }[] {
  const segments = path.split('/');
  const last = segments.length - 1;
  const swap = (i: number, replacement: string) =>
    [...segments.slice(0, i), replacement, ...segments.slice(i + 1)].join('/');
  // The second segment (the first of a one-segment path such as /settings) gets a letter encoded.
  const lettered = Math.min(2, last);
  const hex = segments[lettered].charCodeAt(0).toString(16);
  return [
    { kind: 'backslash', path: path.replace(/\/([^/]*)$/, '\\$1') },
    { kind: 'encoded backslash', path: path.replace(/\/([^/]*)$/, '%5C$1') },
    { kind: 'encoded slash', path: path.replace(/\/([^/]*)$/, '%2F$1') },
    { kind: 'dot segment', path: swap(last, `.${'/'}${segments[last]}`) },
    { kind: 'dot-dot segment', path: `${path}/x/..` },
    { kind: 'backslash dot-dot', path: `/v1/requests/x\\..\\..\\.${path}` },
    { kind: 'encoded dot-dot', path: `${path}/x/%2e%2E` },
    { kind: 'doubled slash', path: swap(1, `${segments[1]}/`) },
    { kind: 'leading doubled slash', path: `/${path}` },
    { kind: 'percent-encoded letter', path: swap(lettered, `%${hex}${segments[lettered].slice(1)}`) },
    { kind: 'malformed percent', path: swap(last, `${segments[last]}%zz`) },
    { kind: 'trailing slash', path: `${path}/` },
    // Of a one-segment path (/settings) the first three leave no leading slash: not a request
    // target at all, which Node's HTTP parser refuses before any router sees it.
  ].filter((v) => v.path.startsWith('/'));
}

t.test('path confusion: the route authorised is the route served', async (t) => {
  // Every POST of the OAuth variants below comes from one address.
  const h = await harness(t, { OAUTH_LIMIT_PER_IP: 100_000 });
  const { app } = await h.gateway();
  const viewerKey = h.identity.addKey(h.identity.addUser('viewer'), { scopes: ['requests:read'] }).raw;
  // Holding every scope, writes and admin routes are forwarded rather than refused with 403.
  const adminKey = h.identity.addKey(h.identity.addUser('admin'), { scopes: [...SCOPES] }).raw;
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const counts = () => Object.values(h.upstreams).map((u) => u.calls.length);

  /** Sends one variant: the call an upstream received for it, or null after checking the refusal. */
  async function probe(t: Test, method: string, path: string, headers: Record<string, string>, what: string) {
    const before = counts();
    const res = await send(port, method, path, { ...headers, 'content-type': 'application/json' });
    const forwarded = Object.values(h.upstreams).flatMap((u, i) => u.calls.slice(before[i]));
    if (forwarded.length === 0) {
      t.ok(res.status >= 400 && res.status < 500, `${what}: refused with ${res.status}, nothing forwarded`);
      if (res.status === 400)
        t.match(JSON.parse(res.body), { success: false, error: { code: 'VALIDATION_ERROR' } });
      return null;
    }
    t.equal(forwarded.length, 1, `${what}: one call forwarded`);
    return forwarded[0];
  }

  const credentials = [
    { who: 'viewer', raw: viewerKey, scopes: ['requests:read'] },
    { who: 'admin', raw: adminKey, scopes: [...SCOPES] },
  ];
  for (const { who, raw, scopes } of credentials) {
    t.test(`/v1 routes, ${who}`, async (t) => {
      let served = 0;
      for (const route of PUBLIC_ROUTES) {
        for (const { kind, path } of variants(concrete(route.path))) {
          const what = `${route.method} ${path} (${kind})`;
          const call = await probe(t, route.method, `${path}?resourceType=user`, bearer(raw), what);
          if (!call) continue;
          served++;
          const match = PUBLIC_ROUTES.find(
            (r) =>
              r.method === call.method &&
              r.service === call.service &&
              new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}\\?`).test(call.url),
          );
          // The principal is bound to the audience and path the gateway built from the route it
          // authorised, and verified against the service and path served: valid, it proves the
          // route authorised is `match`. A spelling of `route` must reach `route` and no other.
          t.type(call.principal, 'object', `${what}: the principal is bound to the path served`);
          t.equal(match, route, `${what}: served ${call.method} ${call.url}, the route spelt`);
          t.equal(call.url, `${concrete(route.path)}?resourceType=user`, `${what}: forwarded canonically`);
          t.ok(
            route.scope === 'authenticated' || scopes.includes(route.scope),
            `${what}: only a route the credential may call`,
          );
        }
      }
      // Equivalent spellings do get through (otherwise the checks above never ran).
      t.ok(served > 0, `${served} variants served`);
    });
  }

  t.test('OAuth and console routes: a spelling of one reaches identity at exactly that path', async (t) => {
    let served = 0;
    for (const route of [...OAUTH_ROUTES, ...CONSOLE_ROUTES]) {
      for (const { kind, path } of variants(route.path)) {
        const what = `${route.method} ${path} (${kind})`;
        const call = await probe(t, route.method, `${path}?state=s`, {}, what);
        if (!call) continue;
        served++;
        t.equal(call.service, 'identity', `${what}: to identity`);
        t.equal(call.url, `${route.path}?state=s`, `${what}: forwarded to the route's own path`);
        t.type(call.forwarded, 'object', `${what}: the forwarding assertion binds the path served`);
      }
    }
    t.ok(served > 0, `${served} variants served`);
  });

  t.test('SCIM: only unambiguous paths under /scim/v2, forwarded as sent', async (t) => {
    const scim = { authorization: `Bearer sdscim_okta_${GOOD_SCIM_SECRET.padEnd(43, 'x')}` };
    const paths: [string, string][] = [
      ['GET', '/scim/v2/Users/u_1'],
      ['POST', '/scim/v2/Users'],
      ['PATCH', '/scim/v2/Groups/g_1'],
      ['DELETE', '/scim/v2/Users/u_1'],
    ];
    const escapes = [
      '/scim/v2/..%2F..%2Fv1%2Fusers',
      '/scim/v2/Users/..\\..\\..\\v1\\users',
      '/scim/v2/%2e%2e/%2e%2e/oauth/token',
      '/scim/v2/Users/../../../v1/users',
      '/scim/v2/./Users',
      '/scim/v2/%55sers/u_1',
    ];
    let served = 0;
    const cases = [
      ...paths.flatMap(([method, path]) => variants(path).map((v) => ({ method, ...v }))),
      ...escapes.map((path) => ({ method: 'GET', path, kind: 'escape' })),
    ];
    for (const { method, path, kind } of cases) {
      const what = `${method} ${path} (${kind})`;
      const call: EchoCall | null = await probe(t, method, path, scim, what);
      if (!call) continue;
      served++;
      t.equal(call.service, 'identity', `${what}: to identity`);
      t.equal(call.url, path, `${what}: as sent`);
      const segments = call.url.split('/').map((s) => decodeURIComponent(s));
      t.same(segments.slice(0, 3), ['', 'scim', 'v2'], `${what}: under /scim/v2`);
      t.notOk(
        segments.some((s) => s === '.' || s === '..' || s.includes('\\') || s.includes('/')),
        `${what}: no segment a parser could read as a step elsewhere`,
      );
      t.type(call.forwarded, 'object', `${what}: the forwarding assertion binds the path served`);
    }
    t.ok(served > 0, `${served} variants served`);
  });

  t.test('malformed percent-encoding in a query is a 400 in the envelope', async (t) => {
    for (const query of ['status=%zz', 'q=%E0%A4%A', 'page=%', 'limit=1%2']) {
      const res = await send(port, 'GET', `/v1/requests?${query}`, bearer(viewerKey));
      t.equal(res.status, 400, query);
      t.match(JSON.parse(res.body), {
        success: false,
        error: { code: 'VALIDATION_ERROR', message: /percent-encoding/ },
      });
    }
    const fine = await send(port, 'GET', '/v1/requests?q=caf%C3%A9+au+lait&status=open', bearer(viewerKey));
    t.equal(fine.status, 200, 'well-formed encoding passes');
  });

  t.test('the reported escape: a backslashed request path cannot reach /v1/events', async (t) => {
    const before = h.upstreams.audit.calls.length;
    const res = await send(
      port,
      'GET',
      '/v1/requests/x\\..\\..\\./events?resourceType=user',
      bearer(viewerKey),
    );
    t.equal(res.status, 400);
    t.equal(h.upstreams.audit.calls.length, before, 'audit saw nothing');
  });
});
