import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PUBLIC_ROUTES, type PublicRoute } from '@support-desk/contracts';
import t from 'tap';
import { bearer, type EchoCall, harness } from './helpers.js';

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

/** Spellings of one route's path that parsers disagree on, or that name it differently. */
function variants(route: PublicRoute): { path: string; kind: string }[] {
  const path = concrete(route.path);
  const segments = path.split('/');
  const last = segments.length - 1;
  const swap = (i: number, replacement: string) =>
    [...segments.slice(0, i), replacement, ...segments.slice(i + 1)].join('/');
  return [
    { kind: 'backslash', path: path.replace(/\/([^/]*)$/, '\\$1') },
    { kind: 'encoded backslash', path: path.replace(/\/([^/]*)$/, '%5C$1') },
    { kind: 'encoded slash', path: path.replace(/\/([^/]*)$/, '%2F$1') },
    { kind: 'dot segment', path: swap(last, `.${'/'}${segments[last]}`) },
    { kind: 'dot-dot segment', path: `${path}/x/..` },
    { kind: 'backslash dot-dot', path: `/v1/requests/x\\..\\..\\.${path}` },
    { kind: 'encoded dot-dot', path: `${path}/x/%2e%2E` },
    { kind: 'doubled slash', path: path.replace('/v1/', '/v1//') },
    { kind: 'leading doubled slash', path: `/${path}` },
    {
      kind: 'percent-encoded letter',
      path: path
        .replace('/v1/', '/v1/%' + segments[2].charCodeAt(0).toString(16))
        .replace(
          `%${segments[2].charCodeAt(0).toString(16)}${segments[2]}`,
          `%${segments[2].charCodeAt(0).toString(16)}${segments[2].slice(1)}`,
        ),
    },
    { kind: 'malformed percent', path: swap(last, `${segments[last]}%zz`) },
    { kind: 'trailing slash', path: `${path}/` },
  ];
}

t.test('path confusion: the route authorised is the route served', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const viewer = h.identity.addUser('viewer');
  const { raw } = h.identity.addKey(viewer, { scopes: ['requests:read'] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const calls = () => Object.values(h.upstreams).reduce((n, u) => n + u.calls.length, 0);
  const lastCall = () =>
    Object.values(h.upstreams)
      .flatMap((u) => u.calls)
      .at(-1) as EchoCall;

  for (const route of PUBLIC_ROUTES) {
    for (const { kind, path } of variants(route)) {
      const before = calls();
      const res = await send(port, route.method, `${path}?resourceType=user`, {
        ...bearer(raw),
        'content-type': 'application/json',
      });
      const what = `${route.method} ${path} (${kind})`;
      if (calls() === before) {
        t.ok(res.status >= 400 && res.status < 500, `${what}: refused with ${res.status}, nothing forwarded`);
        if (res.status === 400)
          t.match(JSON.parse(res.body), { success: false, error: { code: 'VALIDATION_ERROR' } });
        continue;
      }
      // Something was forwarded: it must be one route, canonically spelt, with a principal
      // bound to exactly that path, and a route the viewer's scope allows.
      const served = lastCall();
      const match = PUBLIC_ROUTES.find(
        (r) =>
          r.method === served.method &&
          r.service === served.service &&
          new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}\\?`).test(served.url),
      );
      t.ok(match, `${what}: served ${served.url}, a route of the table`);
      t.equal(served.url, `${concrete(match!.path)}?resourceType=user`, `${what}: forwarded canonically`);
      t.type(served.principal, 'object', `${what}: the principal is bound to the path served`);
      t.ok(
        match!.scope === 'authenticated' || ['requests:read'].includes(match!.scope),
        `${what}: only a route the credential may call`,
      );
    }
  }

  t.test('malformed percent-encoding in a query is a 400 in the envelope', async (t) => {
    for (const query of ['status=%zz', 'q=%E0%A4%A', 'page=%', 'limit=1%2']) {
      const res = await send(port, 'GET', `/v1/requests?${query}`, bearer(raw));
      t.equal(res.status, 400, query);
      t.match(JSON.parse(res.body), {
        success: false,
        error: { code: 'VALIDATION_ERROR', message: /percent-encoding/ },
      });
    }
    const fine = await send(port, 'GET', '/v1/requests?q=caf%C3%A9+au+lait&status=open', bearer(raw));
    t.equal(fine.status, 200, 'well-formed encoding passes');
  });

  t.test('the reported escape: a backslashed request path cannot reach /v1/events', async (t) => {
    const before = h.upstreams.audit.calls.length;
    const res = await send(port, 'GET', '/v1/requests/x\\..\\..\\./events?resourceType=user', bearer(raw));
    t.equal(res.status, 400);
    t.equal(h.upstreams.audit.calls.length, before, 'audit saw nothing');
  });
});
