import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { HttpApp } from '@support-desk/platform/http';
import { documentLinkPlugin, downloadUrlPlugin, maskCredentialsPlugin } from './docs-browser.js';
import { buildOpenApi } from './openapi.js';

/** Where the API reference is served; its assets are under `${DOCS_PREFIX}/static/`. */
const DOCS_PREFIX = '/docs';

/** The document's name in the top bar: the page reads `/openapi.json` with this gateway added. */
const DOCUMENT_NAME = 'Support Desk API · /openapi.json';

const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><rect width="40" height="40" rx="8" ' +
  'fill="#2f6fde"/><text x="20" y="27" font-family="sans-serif" font-size="18" font-weight="700" ' +
  'text-anchor="middle" fill="#fff">SD</text></svg>';
/** The top bar's logo (Swagger UI's topbar is dark): the mark and the product's name. */
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 220 40" width="220" height="40">' +
  '<title>Support Desk</title><rect width="40" height="40" rx="8" fill="#2f6fde"/><text x="20" y="27" ' +
  'font-family="sans-serif" font-size="18" font-weight="700" text-anchor="middle" fill="#fff">SD</text>' +
  '<text x="52" y="27" font-family="sans-serif" font-size="20" font-weight="600" fill="#fff">' +
  'Support Desk</text></svg>';

/**
 * The reference page's Content-Security-Policy: every script, style, image and font comes from this
 * gateway (Swagger UI's files inside the npm package: no CDN, so the docs work offline), and "Try
 * it out" may call this gateway and the configured public address (`servers` of the document).
 */
function docsCsp(serverUrl: string): string {
  const api = new URL(serverUrl).origin;
  return [
    "default-src 'self'",
    "base-uri 'self'",
    "object-src 'none'",
    "frame-ancestors 'self'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self' ${api}`,
    "form-action 'self'",
  ].join('; ');
}

/**
 * `/openapi.json` (the document, built once at start) and `/docs`, an interactive reference: Swagger
 * UI through @fastify/swagger-ui, which serves the swagger-ui-dist files from its package. There,
 * "Authorize" takes an API key (the `apiKey` bearer scheme) and "Try it out" calls this gateway:
 * the copy of the document the page reads (`/docs/json`) lists this gateway, as the page was
 * reached, first among its servers. The top bar shows the product and the document's name, and
 * the curl snippet of a call masks the credential (docs-browser.ts).
 * Both are public (no credential), like the document itself.
 */
export async function registerDocs(app: HttpApp, { serverUrl }: { serverUrl: string }): Promise<void> {
  const document = buildOpenApi({ serverUrl });
  const serialized = JSON.stringify(document);
  app.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(serialized),
  );

  await app.register(async (scope) => {
    // Static mode: @fastify/swagger only hands our document to the UI (it generates nothing).
    await scope.register(swagger, { mode: 'static', specification: { document: document as never } });
    await scope.register(swaggerUi, {
      routePrefix: DOCS_PREFIX,
      staticCSP: docsCsp(serverUrl),
      validatorUrl: false, // never send the document to Swagger's online validator
      uiConfig: {
        // The top bar names the document instead of showing its address in an input.
        urls: [{ url: `${DOCS_PREFIX}/json`, name: DOCUMENT_NAME }],
        plugins: [downloadUrlPlugin, documentLinkPlugin, maskCredentialsPlugin] as never,
        deepLinking: true,
        // The key stays in the page's memory only (never in localStorage) and leaves with the tab.
        persistAuthorization: false,
        tryItOutEnabled: false,
        displayOperationId: false,
        defaultModelsExpandDepth: 0,
      },
      logo: { type: 'image/svg+xml', content: LOGO, href: DOCS_PREFIX, target: '_self' },
      theme: {
        title: 'Support Desk API reference',
        favicon: [
          { filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: ICON },
        ],
      },
      transformSpecification: (spec, request) => ({
        ...spec,
        servers: [
          {
            url: `${request.protocol}://${request.host}`,
            description: 'This gateway (as the page was reached)',
          },
          ...((spec as { servers?: unknown[] }).servers ?? []),
        ],
      }),
    });
  });
}
