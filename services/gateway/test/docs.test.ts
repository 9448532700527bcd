import t from 'tap';
import { harness } from './helpers.js';

/** Every `src`/`href` in a page: scripts, styles, icons. */
const referencedUrls = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]);

t.test('/docs is Swagger UI served from the gateway, with no asset from elsewhere', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();

  const page = await app.inject({ method: 'GET', url: '/docs' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  t.match(page.body, /<div id="swagger-ui">/, 'the Swagger UI page');
  const csp = String(page.headers['content-security-policy']);
  t.match(csp, /script-src 'self'(;|$)/, 'scripts only from the gateway');
  t.match(csp, /default-src 'self'/);

  const urls = referencedUrls(page.body);
  t.ok(
    urls.some((u) => u.endsWith('swagger-ui-bundle.js')),
    'loads the bundle',
  );
  t.ok(
    urls.some((u) => u.endsWith('swagger-initializer.js')),
    'loads the initializer',
  );
  for (const url of urls) {
    t.match(url, /^\/docs\//, `${url} is served by the gateway itself`);
    const asset = await app.inject({ method: 'GET', url });
    t.equal(asset.statusCode, 200, `${url} loads`);
    t.ok(asset.rawPayload.length > 0, `${url} is not empty`);
  }

  // The initializer points the UI at the gateway's copy of the document and at no validator.
  const init = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
  t.match(init.body, /validatorUrl: null/);
  t.match(init.body, /resolveUrl\('\.\/json'\)/);
  const code = init.body.replace(/^\s*\/\/.*$/gm, ''); // its comments cite a web page
  t.notMatch(code, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'no absolute address in the initializer');
  // The top bar: the product's logo and the document's name (no address to edit); the plugins
  // that show the document's own link and mask the credential in the curl snippet.
  t.match(init.body, /"urls":\[\{"url":"\/docs\/json","name":"Support Desk API · \/openapi\.json"\}\]/);
  const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(init.body)?.[1] ?? '';
  t.match(Buffer.from(logo, 'base64').toString(), /Support Desk/, 'our logo, not fastify’s');
  t.match(init.body, /wrapSelectors: \{ requestFor: wrap, mutatedRequestFor: wrap \}/);
  t.match(init.body, /url: '\/openapi\.json'/);
  t.match(page.body, /href="\.\/static\/theme\/favicon\.svg"|href="\/docs\/static\/theme\/favicon\.svg"/);

  // That copy is /openapi.json with this gateway first among the servers ("Try it out" target).
  const own = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const shown = (
    await app.inject({ method: 'GET', url: '/docs/json', headers: { host: 'desk.test:8443' } })
  ).json();
  t.same(shown.paths, own.paths);
  t.equal(shown.servers[0].url, 'http://desk.test:8443');
  t.same(shown.servers.slice(1), own.servers);
  t.ok(own.components.securitySchemes.apiKey.scheme === 'bearer', 'a place to paste a key');
});

t.test('/openapi.json is unchanged by the docs: no UI server in it, built once', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const a = await app.inject({ method: 'GET', url: '/openapi.json' });
  const b = await app.inject({ method: 'GET', url: '/openapi.json' });
  t.equal(a.statusCode, 200);
  t.match(a.headers['content-type'], /^application\/json/);
  t.equal(a.body, b.body);
  t.equal(a.json().servers.length, 1);
  t.notOk(a.headers['content-security-policy'], 'the docs CSP stays on the docs');
});
