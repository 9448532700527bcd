import {
  auditRouteSchemas,
  ENTITY_TAGGED_PATHS,
  identityRouteSchemas,
  PUBLIC_ROUTES,
  requestsRouteSchemas,
  ROUTE_EXAMPLES,
  routeKey,
  type RouteSchemas,
  webhooksRouteSchemas,
} from '@support-desk/contracts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import t from 'tap';
import { openApiPath } from '../src/use-cases/route-table.js';
import { buildOpenApi } from '../src/routes/openapi.js';
import { harness } from './helpers.js';

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

const SCHEMA_MAPS = [requestsRouteSchemas, identityRouteSchemas, auditRouteSchemas, webhooksRouteSchemas];
/** Creates whose result has no route of its own: a comment is read within its request. */
const HAS_NO_URL_OF_ITS_OWN = ['POST /v1/requests/:id/comments'];

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
    for (const code of ['401', '403', '429', '500'])
      t.ok(responses[code], `${routeKey(route)} documents ${code}`);
    // Overload (issue 31): a refusal says so, and when to come back.
    const shed = responses['503'] as { description: string; headers?: Record<string, unknown> };
    t.match(shed?.description, /shed under load/, `${routeKey(route)}: 503 names load shedding`);
    t.ok(shed?.headers?.['Retry-After'], `${routeKey(route)}: 503 has Retry-After`);
    t.match((responses['429'] as { description: string }).description, /in flight/);
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

type Operation = {
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> };
  responses: Record<
    string,
    { content?: Record<string, { schema: unknown; example?: unknown }>; headers?: Record<string, unknown> }
  >;
  description?: string;
  security?: unknown[];
};

t.test('every operation has examples, and each validates against its schema', async (t) => {
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown> };
  };
  // The document's own schemas, as JSON Schema 2020-12 (OpenAPI 3.1's dialect); `binary` is a file.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const check = (schema: unknown, example: unknown, where: string) => {
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
    const valid = ajv.validate(rebased, example);
    t.ok(valid, `${where}: the example validates`, { errors: ajv.errors });
  };

  for (const route of PUBLIC_ROUTES) {
    const key = routeKey(route);
    const op = doc.paths[openApiPath(route.path)][route.method.toLowerCase()];
    t.ok(ROUTE_EXAMPLES[key], `${key} has an entry in ROUTE_EXAMPLES`);
    t.ok(op.security && op.security.length > 0, `${key} has a security requirement`);
    t.match(op.description, new RegExp(`Rate bucket:\\*\\* \`${route.bucket}\``), `${key} names its bucket`);
    t.match(op.description, /\*\*Scope:\*\*/, `${key} names its scope`);
    for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
      t.ok(media.example !== undefined, `${key} has a ${type} request example`);
      check(media.schema, media.example, `${key} request (${type})`);
    }
    const statuses = Object.keys(op.responses);
    t.ok(
      statuses.some((s) => s.startsWith('2')),
      `${key} has a success response`,
    );
    for (const code of ['400', '401', '403', '429', '500'])
      t.ok(op.responses[code], `${key} documents ${code}`);
    for (const status of statuses.filter((s) => s !== '304')) {
      const content = op.responses[status].content;
      t.ok(content, `${key} ${status} has content`);
      for (const [type, media] of Object.entries(content ?? {})) {
        t.ok(media.example !== undefined, `${key} ${status} ${type} has an example`);
        check(media.schema, media.example, `${key} ${status} ${type}`);
        if (!status.startsWith('2')) t.equal(type, 'application/json');
      }
    }
    // A route with a path parameter can miss; one with a body can be too large.
    if (route.path.includes(':')) t.ok(op.responses['404'], `${key} documents 404`);
    if (op.requestBody) t.ok(op.responses['413'], `${key} documents 413`);
    if (ENTITY_TAGGED_PATHS.includes(route.path)) {
      if (route.method === 'GET')
        t.ok(op.responses['304'] && op.responses['200'], `${key} documents its ETag and 304`);
      else t.ok(op.responses['412'], `${key} documents 412 for If-Match`);
      if (route.method === 'PATCH') t.ok(op.responses['200'].headers?.ETag, `${key} documents its ETag`);
    }
    if (op.responses['201']) {
      t.equal(
        Boolean(op.responses['201'].headers?.Location),
        !HAS_NO_URL_OF_ITS_OWN.includes(key),
        `${key}: its 201 documents Location, unless what it creates has no URL of its own`,
      );
    }
  }
  // Every Location names a resource a GET reads.
  const reads = new Set(PUBLIC_ROUTES.filter((r) => r.method === 'GET').map((r) => r.path));
  for (const map of SCHEMA_MAPS)
    for (const [key, schemas] of Object.entries(map) as [string, RouteSchemas][])
      if (schemas.location)
        t.ok(reads.has(schemas.location), `${key}: Location ${schemas.location} is a GET`);
  // The OAuth endpoints (written by hand) too: every body they take or answer has an example.
  for (const [path, item] of Object.entries(doc.paths)) {
    if (path.startsWith('/v1/')) continue;
    for (const [method, op] of Object.entries(item)) {
      const media = [
        ...Object.entries(op.requestBody?.content ?? {}),
        ...Object.values(op.responses).flatMap((r) => Object.entries(r.content ?? {})),
      ];
      for (const [type, m] of media)
        t.ok(m.example !== undefined, `${method} ${path} ${type} has an example`);
    }
  }
  // No example for a route that does not exist (a renamed route left behind).
  const known = new Set(PUBLIC_ROUTES.map(routeKey));
  for (const key of Object.keys(ROUTE_EXAMPLES)) t.ok(known.has(key), `${key} is a public route`);
});

t.test('the attachment download documents what it is served as', async (t) => {
  const doc = buildOpenApi({ serverUrl: 'x' }) as { paths: Record<string, Record<string, Operation>> };
  const op = doc.paths['/v1/attachments/{id}'].get;
  const types = Object.keys(op.responses['200'].content ?? {});
  t.ok(types.includes('application/octet-stream'), 'unrecognised bytes');
  t.ok(types.includes('*/*'), 'any type the sniffer detects');
  t.match(op.description, /detected from the bytes/);
  t.match(op.description, /nosniff/);
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
  t.ok(op.responses['406'], 'documents 406');
  t.equal(op['x-rate-limit-bucket'], 'events');
});
