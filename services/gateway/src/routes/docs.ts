import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { HttpApp } from '@support-desk/platform';
import { buildOpenApi } from './openapi.js';

/** Where the API reference is served; its assets are under `${DOCS_PREFIX}/static/`. */
export const DOCS_PREFIX = '/docs';

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
 * the copy of the document the page reads lists this gateway, as the page was reached, first
 * among its servers.
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
        deepLinking: true,
        persistAuthorization: false,
        tryItOutEnabled: false,
        displayOperationId: false,
        defaultModelsExpandDepth: 0,
      },
      theme: { title: 'Support Desk API reference' },
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
