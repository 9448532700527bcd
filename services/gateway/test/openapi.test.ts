import { PUBLIC_ROUTES, routeKey } from '@support-desk/contracts';
import t from 'tap';
import { openApiPath } from '../src/use-cases/route-table.js';
import { buildOpenApi } from '../src/routes/openapi.js';
import { harness } from './helpers.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

t.test('every proxied route is in the OpenAPI document and vice versa', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  t.equal(res.statusCode, 200);
  const doc = res.json() as {
    openapi: string;
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  t.equal(doc.openapi, '3.1.0');

  const documented = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item).filter((m) => METHODS.includes(m))) {
      documented.add(`${method.toUpperCase()} ${path}`);
    }
  }
  const proxied = new Set(PUBLIC_ROUTES.map((r) => `${r.method} ${openApiPath(r.path)}`));
  for (const key of proxied) t.ok(documented.has(key), `documented: ${key}`);
  for (const key of documented) {
    if (key.split(' ')[1].startsWith('/v1/')) t.ok(proxied.has(key), `proxied: ${key}`);
    else t.match(key, /^(GET|POST) \/oauth\//, `non-/v1 operations are OAuth endpoints: ${key}`);
  }

  // The documented OAuth endpoints are really proxied (to identity), without API authentication.
  for (const key of documented) {
    const [method, path] = key.split(' ');
    if (!path.startsWith('/oauth/')) continue;
    const r = await app.inject({
      method: method as 'GET' | 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: method === 'POST' ? 'client_id=x' : undefined,
    });
    t.equal(r.json().data?.service, 'identity', `${key} reaches identity`);
  }

  // Each operation names its scope, bucket, security and the envelope errors.
  for (const route of PUBLIC_ROUTES) {
    const op = doc.paths[openApiPath(route.path)][route.method.toLowerCase()] as Record<string, unknown>;
    t.equal(op['x-required-scope'], route.scope, routeKey(route));
    t.equal(op['x-rate-limit-bucket'], route.bucket);
    const responses = op.responses as Record<string, unknown>;
    for (const code of ['401', '403', '404', '429', '500'])
      t.ok(responses[code], `${routeKey(route)} documents ${code}`);
    t.ok(
      Object.keys(responses).some((c) => c.startsWith('2')),
      `${routeKey(route)} has a success response`,
    );
  }
});

t.test('every $ref resolves and schemas come from the route schema maps', async (t) => {
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as Record<string, unknown>;
  const refs: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.push(v);
        else walk(v);
      }
    }
  };
  walk(doc);
  t.ok(refs.length > 0);
  for (const ref of new Set(refs)) {
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((n, part) => (n as Record<string, unknown> | undefined)?.[part], doc);
    t.ok(target, `${ref} resolves`);
  }
  const components = doc.components as {
    securitySchemes: Record<string, unknown>;
    schemas: Record<string, unknown>;
  };
  t.ok(components.schemas.ErrorEnvelope);
  t.same(Object.keys(components.securitySchemes).sort(), ['apiKey', 'oauth2']);

  // A route with a schema in the map gets it; one without still appears with the envelope.
  const withSchema = buildOpenApi({
    serverUrl: 'x',
    routes: [PUBLIC_ROUTES[0], PUBLIC_ROUTES[1]],
    schemaMaps: [
      {
        [routeKey(PUBLIC_ROUTES[0])]: {
          querystring: {
            type: 'object',
            properties: { q: { type: 'string', description: 'search' } },
          } as never,
          response: { 200: { type: 'object', properties: { success: { const: true } } } as never },
        },
      },
    ],
  }) as {
    paths: Record<
      string,
      Record<string, { parameters: { name: string }[]; responses: Record<string, unknown> }>
    >;
  };
  const list = withSchema.paths['/v1/requests'].get;
  t.same(
    list.parameters.map((p) => p.name),
    ['q'],
  );
  t.ok(list.responses['200']);
  t.ok(withSchema.paths['/v1/requests'].post.responses['201'], 'unmapped POST still documented');
});

t.test('the audit export is documented as an NDJSON stream of event lines, with its 406', async (t) => {
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as {
    paths: Record<string, Record<string, { responses: Record<string, any>; 'x-rate-limit-bucket': string }>>;
  };
  const op = doc.paths['/v1/events/export'].get;
  const ok = op.responses['200'].content;
  t.same(Object.keys(ok), ['application/x-ndjson'], 'produces NDJSON only');
  const lines = ok['application/x-ndjson'].schema.anyOf as { properties: Record<string, unknown> }[];
  t.ok(
    lines.some((l) => 'cursor' in l.properties && 'id' in l.properties),
    'an event line with its cursor',
  );
  t.ok(
    lines.some((l) => 'nextCursor' in l.properties && 'count' in l.properties),
    'the end line',
  );
  t.same(op.responses['406'], { $ref: '#/components/responses/406' });
  t.equal(op['x-rate-limit-bucket'], 'events');
  const download = doc.paths['/v1/attachments/{id}'].get.responses['200'].content;
  t.same(download, { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } });
});
