import {
  auditRouteSchemas,
  ENTITY_TAGGED_PATHS,
  identityRouteSchemas,
  idKindOfPattern,
  PUBLIC_ROUTE_SCHEMAS,
  PUBLIC_ROUTES,
  ROUTE_EXAMPLES,
  requestsRouteSchemas,
  routeKey,
  type RouteSchemas,
  webhooksRouteSchemas,
} from '@support-desk/contracts';
import { PUBLIC_MAX_HEADER_BYTES } from '@support-desk/platform/http';
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

type Media = { schema: unknown; example?: unknown; examples?: Record<string, { value: unknown }> };
type Operation = {
  requestBody?: { content: Record<string, Media> };
  responses: Record<
    string,
    { description?: string; content?: Record<string, Media>; headers?: Record<string, unknown> }
  >;
  parameters?: Record<string, unknown>[];
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
        const shown = media.examples ? Object.values(media.examples).map((e) => e.value) : [media.example];
        t.ok(
          shown.length > 0 && shown.every((e) => e !== undefined),
          `${key} ${status} ${type} has an example`,
        );
        for (const example of shown) check(media.schema, example, `${key} ${status} ${type}`);
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

type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, Record<string, unknown>>; headers: Record<string, unknown> };
};
const operationsOf = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
  );
/** A parameter as written, `$ref`s to the components followed. */
const resolved = (doc: Doc, p: Record<string, unknown>) =>
  typeof p.$ref === 'string' ? doc.components.parameters[p.$ref.split('/').pop()!] : p;

t.test(
  'no optional parameter is pre-filled: none carries an example or default a UI would send',
  async (t) => {
    // Swagger UI fills an input with its parameter's example and sends it; a generator sends it with
    // every call. An example Idempotency-Key makes the next try a 422 for 24 h, an If-Match a 412.
    const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as Doc;
    let headers = 0;
    for (const { key, op } of operationsOf(doc)) {
      for (const raw of op.parameters ?? []) {
        const p = resolved(doc, raw) as { name: string; in: string; required?: boolean; schema?: object };
        if (p.in !== 'header' || p.required) continue;
        headers += 1;
        const schema = (p.schema ?? {}) as Record<string, unknown>;
        for (const field of ['example', 'examples'])
          t.notOk(field in p || field in schema, `${key} ${p.name} has no ${field}`);
        t.notOk('default' in schema, `${key} ${p.name} has no default`);
      }
    }
    t.ok(headers > 20, `${headers} optional headers checked`);
  },
);

t.test('descriptions render as written: a <placeholder> only inside a code span', async (t) => {
  // Markdown renderers (Swagger UI's) take `<bucket>` outside a code span for an HTML tag and drop it.
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' });
  const descriptions: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object')
      for (const [k, v] of Object.entries(node)) {
        if (k === 'description' && typeof v === 'string') descriptions.push(v);
        else walk(v);
      }
  };
  walk(doc);
  t.ok(descriptions.length > 100);
  for (const text of descriptions) {
    const outsideCode = text.replace(/`[^`]*`/g, '');
    t.notMatch(outsideCode, /<[A-Za-z/!]/, `renders whole: ${text.slice(0, 80)}`);
  }
});

t.test("each operation's 400 example is its own: the fields it names are the operation's", async (t) => {
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as Doc;
  const deref = (s: unknown) => s as { properties?: Record<string, unknown> } | undefined;
  for (const route of PUBLIC_ROUTES) {
    const op = doc.paths[openApiPath(route.path)][route.method.toLowerCase()];
    const media = op.responses['400'].content?.['application/json'];
    const error = (media?.example as { error: { message: string; details?: { field: string }[] } }).error;
    const query = new Set((op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name));
    const body = deref(op.requestBody?.content['application/json']?.schema);
    for (const { field } of error.details ?? []) {
      const [where, name] = field.split('.');
      if (where === 'query') t.ok(query.has(name), `${routeKey(route)}: ${field} is one of its parameters`);
      else if (where === 'body')
        t.ok(name in (body?.properties ?? {}), `${routeKey(route)}: ${field} is in its body`);
      else t.fail(`${routeKey(route)}: ${field}`);
    }
    if (!error.details) t.match(error.message, /malformed/, `${routeKey(route)}: the gateway's own 400`);
  }
});

t.test('a request example names another resource only where the body requires one', async (t) => {
  // Examples run as shown on a fresh stack (/docs fills "Try it out" with them): an optional
  // reference (a group, an assignee) would name one that does not exist there.
  const isId = (v: unknown) => typeof v === 'string' && /^[a-z]{3}_[0-9a-z]{26}$/.test(v);
  const schemas = PUBLIC_ROUTE_SCHEMAS;
  for (const route of PUBLIC_ROUTES) {
    const example = ROUTE_EXAMPLES[routeKey(route)]?.request as Record<string, unknown> | undefined;
    if (!example || typeof example !== 'object') continue;
    const required = new Set((schemas[routeKey(route)]?.body as { required?: string[] })?.required ?? []);
    for (const [field, value] of Object.entries(example)) {
      const ids = [value].flat().filter(isId);
      if (ids.length > 0)
        t.ok(required.has(field), `${routeKey(route)}: body.${field} names ${ids.join(', ')}`);
    }
  }
});

t.test('the gateway’s own refusals are on every operation: 431 and both causes of 429', async (t) => {
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as Doc;
  for (const { key, op } of operationsOf(doc)) {
    const tooLarge = op.responses['431'];
    t.match(tooLarge?.description, /HEADERS_TOO_LARGE.*16 KiB/, `${key} documents 431`);
    t.same(tooLarge?.content?.['application/json']?.schema, { $ref: '#/components/schemas/ErrorEnvelope' });
    if (!key.split(' ')[1].startsWith('/v1/')) continue;
    const limited = op.responses['429'];
    t.match(limited.description, /failed authentication too often/, `${key}: 429 without a valid credential`);
    const shown = Object.values(limited.content?.['application/json']?.examples ?? {}).map((e) =>
      JSON.stringify(e.value),
    );
    t.match(shown.join(), /bucket.*failed authentications/, `${key}: an example of each`);
  }
});

/** The query parameters of every /v1 operation, as the document states them. */
function queryParameters(doc: Doc) {
  return PUBLIC_ROUTES.flatMap((route) =>
    (doc.paths[openApiPath(route.path)][route.method.toLowerCase()].parameters ?? [])
      .filter((p) => p.in === 'query')
      .map((p) => ({
        key: `${routeKey(route)} ${String(p.name)}`,
        description: String(p.description ?? ''),
        schema: p.schema as Record<string, unknown>,
      })),
  );
}

t.test('a comma-list filter states its allowed values, and cursors their alphabet', async (t) => {
  // Schemathesis (any client generator) reads the schema, not the description: with a bare
  // string every generated value was a 400 the schema did not foresee.
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as Doc;
  let lists = 0;
  for (const { key, description, schema } of queryParameters(doc)) {
    const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern) : null;
    // A list of fixed values (`Values: …`, the event `Types: …`); tags are free text.
    if (/separated by commas/.test(description) && /(Values|Types): /.test(description)) {
      lists += 1;
      t.ok(pattern, `${key} has a pattern`);
      const values = /Values: (.*)\.$/
        .exec(description)?.[1]
        .match(/`[^`]+`/g)
        ?.map((v) => v.slice(1, -1));
      for (const value of values ?? []) t.ok(pattern?.test(value), `${key} takes ${value}`);
      if (values) t.ok(pattern?.test(`${values.at(-1)} , ${values[0]}`), `${key} takes a list`);
      for (const wrong of ['bogus', `${values?.[0] ?? 'x'},`, ',', ''])
        t.notOk(pattern?.test(wrong), `${key} refuses ${JSON.stringify(wrong)}`);
    }
    if (key.endsWith(' cursor')) {
      t.equal(schema.pattern, '^[A-Za-z0-9_-]+$', `${key}: base64url, as cursors are written`);
      t.equal(schema.maxLength, 1024);
    }
  }
  t.ok(lists >= 10, `${lists} comma lists`);
});

t.test('every call within the documented limits fits in what the gateway reads (no 431)', async (t) => {
  // The gateway's HTTP server refuses a request line and headers over PUBLIC_MAX_HEADER_BYTES: a
  // call the schema allows must fit, percent-encoded the worst way (a character outside ASCII is
  // 4 bytes of UTF-8, 12 once encoded; one a pattern keeps to ASCII at most 3).
  const worst = (schema: Record<string, unknown>): number => {
    if (Array.isArray(schema.enum)) return Math.max(...schema.enum.map((v) => String(v).length)) * 3;
    if (schema.type === 'integer' || schema.type === 'number') return 24;
    if (schema.type === 'boolean') return 5;
    if (schema.format === 'date-time') return 3 * 40;
    if (idKindOfPattern(schema.pattern)) return 30;
    if (typeof schema.maxLength === 'number') return schema.maxLength * (schema.pattern ? 3 : 12);
    return Infinity;
  };
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as Doc;
  // The request line's method, path and version, the API key, and what any client sends besides.
  const fixed = 300 + 120 + 512;
  const byOperation = new Map<string, number>();
  for (const { key, schema } of queryParameters(doc)) {
    const [method, path, name] = key.split(' ');
    t.ok(Number.isFinite(worst(schema)), `${key} is bounded`);
    const operation = `${method} ${path}`;
    byOperation.set(operation, (byOperation.get(operation) ?? 0) + name.length + 2 + worst(schema));
  }
  for (const route of PUBLIC_ROUTES) {
    const query = byOperation.get(routeKey(route)) ?? 0;
    const headers = 'Idempotency-Key: '.length + 255; // the only bounded header a client may add
    t.ok(
      fixed + query + headers <= PUBLIC_MAX_HEADER_BYTES,
      `${routeKey(route)}: at most ${fixed + query + headers} bytes`,
    );
  }
});

t.test('what the README says of two operations, the document says too', async (t) => {
  const doc = buildOpenApi({ serverUrl: 'https://desk.example.com' }) as Doc;
  // DELETE /v1/users/:id deactivates: the user stays readable (a client must not expect a 404).
  t.match(
    doc.paths['/v1/users/{id}'].delete.description,
    /not removed: `GET \/v1\/users\/\{id\}` keeps answering 200 with `status: inactive`/,
  );
  // An empty upload is refused (400 body.file is empty): the file part says it is not empty.
  const upload = doc.paths['/v1/requests/{id}/attachments'].post.requestBody?.content['multipart/form-data']
    ?.schema as { properties: { file: { minLength?: number } } };
  t.equal(upload.properties.file.minLength, 1);
  // The authorization pages refuse malformed input (a NUL character, a bad percent-encoding)
  // with the error envelope before any page is rendered: their 400 documents both.
  for (const method of ['get', 'post'])
    t.same(Object.keys(doc.paths['/oauth/authorize'][method].responses['400'].content ?? {}).sort(), [
      'application/json',
      'text/html',
    ]);
});

t.test('every method the gateway serves on a documented path is documented (Allow agrees)', async (t) => {
  // A generator calls the methods a path does not document and expects 405 with an Allow that
  // names exactly the documented ones (HEAD goes with GET).
  const h = await harness(t);
  const { app } = await h.gateway();
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
  for (const [path, item] of Object.entries(doc.paths)) {
    const documented = Object.keys(item).map((m) => m.toUpperCase());
    if (documented.includes('GET')) documented.push('HEAD');
    const res = await app.inject({ method: 'PUT', url: path.replace(/\{\w+\}/g, 'x1') });
    t.equal(res.statusCode, 405, `PUT ${path}`);
    t.same(String(res.headers.allow).split(', ').sort(), documented.sort(), `${path}: Allow`);
  }
});
