/**
 * Identity for the bench, on the real NATS: one admin, one enterprise API key and one OAuth
 * client (limits high enough for no 429), a JWKS on loopback and an access token it verifies.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type NatsNames, newId, type ResolveApiKeyReply, type UserSnapshot } from '@support-desk/contracts';
import type { NatsConnection } from '@support-desk/platform/messaging';
import { serveIdentityRpc } from '@support-desk/platform/clients';
import { testVerifier, uniqueName } from '@support-desk/platform/testing';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export const BENCH_ISSUER = 'http://bench.local';

export async function startIdentityStandIn(nc: NatsConnection, names: NatsNames) {
  const user: UserSnapshot = {
    id: newId('user'),
    email: 'bench@example.com',
    name: 'Bench',
    role: 'admin',
    status: 'active',
    isVip: false,
    groups: [],
    updatedAt: new Date().toISOString(),
  };
  const keyId = newId('apiKey');
  const apiKey = `sd_${keyId}_${uniqueName('secret')}`;
  const limits = { general: 100_000_000, events: 100_000_000 };
  const clientId = newId('oauthClient');
  serveIdentityRpc(
    nc,
    names,
    {
      resolveApiKey: async ({ key }): Promise<ResolveApiKeyReply> =>
        key === apiKey
          ? {
              valid: true,
              keyId,
              owner: user,
              scopes: ['admin'],
              plan: 'enterprise',
              limits,
              allowlist: [],
              globalAllowlist: [],
              expiresAt: null,
            }
          : { valid: false, reason: 'unknown' },
      getUser: async () => ({ found: true, user }),
      getSettings: async () => ({ globalAllowlist: [] }),
      getOAuthClient: async () => ({
        found: true,
        client: { clientId, name: 'bench', plan: 'enterprise', limits },
      }),
    },
    { verifier: testVerifier() },
  );

  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = 'bench-1';
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] });
  const jwksServer = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(jwks),
  );
  await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
  const token = await new SignJWT({ client_id: clientId, scope: 'admin', jti: 'bench' })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
    .setSubject(user.id)
    .setIssuer(BENCH_ISSUER)
    .setAudience('support-desk-api')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);

  return {
    user,
    keyId,
    apiKey,
    token,
    jwksUrl: `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`,
    close: () => jwksServer.close(),
  };
}
