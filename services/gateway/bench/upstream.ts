/**
 * A stand-in service for the bench: the platform HTTP app with the principal guard, answering
 * a list like the requests service does (no database, so the bench measures the gateway).
 */
import { createHttpApp, ok, requirePrincipal } from '@support-desk/platform/http';
import { createLogger } from '@support-desk/platform/core';
import { pino } from 'pino';

const port = Number(process.argv[2] ?? 0);
const app = createHttpApp({
  logger: createLogger({
    service: 'bench-upstream',
    level: 'info',
    destination: pino.destination('/dev/null'),
  }),
});
// Verifies the gateway's assertions like the requests service does (keys from the bench).
requirePrincipal(app, { verifyKeys: process.env.PRINCIPAL_VERIFY_KEYS ?? '', audience: 'requests' });
const items = Array.from({ length: 5 }, (_, i) => ({
  id: `req_${i}`,
  title: `Request ${i}`,
  status: 'open',
}));
app.get('/v1/requests', async (request) =>
  ok({
    requests: items,
    requester: request.principal.userId,
    pagination: { page: 1, limit: 20, total: 5, pages: 1 },
  }),
);
await app.listen({ host: '127.0.0.1', port });
process.send?.('ready');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
