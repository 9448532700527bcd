import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AUTHENTICATED_CLIENT_HEADER,
  AUTHENTICATED_SCIM_HEADER,
  FORWARDED_HEADER,
  type NatsNames,
} from '@support-desk/contracts';
import {
  bodyDigest,
  createForwardedVerifier,
  createLogger,
  createPrincipalVerifier,
  type Logger,
} from '@support-desk/platform/core';
import type { NatsConnection } from '@support-desk/platform/messaging';
import { IdentityDouble, testEnv, testLogger, testNats, uniqueName } from '@support-desk/platform/testing';
import { Redis } from 'ioredis';
import { decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

type CryptoKeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import type { Test } from 'tap';
import { composeService, type Gateway } from '../src/composition.js';
import { type GatewayConfig, gatewayConfig } from '../src/config.js';

export const ISSUER = 'http://gateway.test';
export const AUDIENCE = 'support-desk-api';

/** A JWKS endpoint on loopback and an ES256 signer, as identity would publish and sign. */
export async function startJwks(t: Test) {
  const keys: { kid: string; privateKey: CryptoKeyLike; jwk: JWK }[] = [];
  let published: JWK[] = [];
  let fetches = 0;
  const server = createServer((req, res) => {
    fetches++;
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;

  const jwks = {
    url,
    get fetches() {
      return fetches;
    },
    /** Makes a new key; published unless told otherwise (unknown kid / rotation tests). */
    async addKey(publish = true) {
      const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
      const kid = uniqueName('kid');
      const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
      keys.push({ kid, privateKey, jwk });
      if (publish) published.push(jwk);
      return { kid, privateKey, publicJwk: jwk };
    },
    publish(kid: string) {
      const k = keys.find((x) => x.kid === kid);
      if (k) published.push(k.jwk);
    },
    unpublishAll() {
      published = [];
    },
    /** An access token as identity issues it; every field may be overridden for negative tests. */
    async sign(
      claims: { sub: string; client_id: string; scope?: string; [k: string]: unknown },
      o: {
        kid?: string;
        typ?: string;
        iss?: string;
        aud?: string;
        expiresIn?: string | number;
        alg?: string;
      } = {},
    ) {
      const key = o.kid ? keys.find((k) => k.kid === o.kid)! : keys[0];
      return new SignJWT({ jti: uniqueName('jti'), ...claims })
        .setProtectedHeader({ alg: o.alg ?? 'ES256', typ: o.typ ?? 'at+jwt', kid: key.kid })
        .setIssuer(o.iss ?? ISSUER)
        .setAudience(o.aud ?? AUDIENCE)
        .setIssuedAt()
        .setExpirationTime(o.expiresIn ?? '10m')
        .sign(key.privateKey);
    },
  };
  return jwks;
}

export interface EchoCall {
  service: string;
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  bodyBytes: number;
  principal: unknown;
  /** The verified forwarding assertion of an anonymous (OAuth) call, 'invalid', or null. */
  forwarded: unknown;
  /**
   * How the assertion (principal or forwarding) binds the body received: `digest` (its `bd` is
   * the SHA-256 of these very bytes), `one-time` (a `jti`, an upload), `mismatch` or `missing`.
   */
  bodyBinding: 'digest' | 'one-time' | 'mismatch' | 'missing' | null;
}

function bodyBindingOf(assertion: unknown, body: Buffer): EchoCall['bodyBinding'] {
  if (typeof assertion !== 'string') return null;
  const claims = decodeJwt(assertion);
  if (typeof claims.jti === 'string') return 'one-time';
  if (typeof claims.bd !== 'string') return 'missing';
  return claims.bd === bodyDigest(body) ? 'digest' : 'mismatch';
}

/** The client secret the stand-in identity accepts: it then names the client as identity does. */
export const GOOD_CLIENT_SECRET = 'good-secret';
/** The start of a SCIM token secret the stand-in identity accepts (`sdscim_<name>_good…`). */
export const GOOD_SCIM_SECRET = 'good';

/** A service stand-in: verifies the principal like a real service and echoes what it received. */
export async function startUpstream(t: Test, service: string) {
  // The real service's check: only assertions for this service and this very call are accepted.
  const verify = createPrincipalVerifier(testEnv.principalKeys.verifyKeys, service);
  const verifyForwarded = createForwardedVerifier(testEnv.principalKeys.verifyKeys, service);
  const calls: EchoCall[] = [];
  const server: Server = createServer((req, res) => {
    let bodyBytes = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      bodyBytes += c.length;
      if (bodyBytes <= 1024 * 1024) chunks.push(c);
    });
    req.on('end', async () => {
      const header = req.headers['x-sd-principal'];
      let principal: unknown = null;
      if (typeof header === 'string') {
        const call = { method: req.method ?? '', url: req.url ?? '' };
        principal = await verify(header, call).catch(() => 'invalid');
      }
      const fwd = req.headers[FORWARDED_HEADER];
      let forwarded: unknown = null;
      if (typeof fwd === 'string') {
        forwarded = await verifyForwarded(fwd, { method: req.method ?? '', url: req.url ?? '' }).catch(
          () => 'invalid',
        );
      }
      const call = {
        service,
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        bodyBytes,
        principal,
        forwarded,
        bodyBinding: bodyBindingOf(header ?? fwd, Buffer.concat(chunks)),
      };
      // The gateway's health probes of a replica list are not calls a client made.
      if (call.url !== '/readyz') calls.push(call);
      const [clientId, secret] = Buffer.from(
        (req.headers.authorization ?? '').replace(/^Basic /i, ''),
        'base64',
      )
        .toString()
        .split(':');
      const authenticated = secret === GOOD_CLIENT_SECRET ? { [AUTHENTICATED_CLIENT_HEADER]: clientId } : {};
      // A SCIM token whose secret starts with GOOD_SCIM_SECRET authenticates, as identity would say.
      const scim = new RegExp(`^Bearer sdscim_([a-z0-9_-]+)_${GOOD_SCIM_SECRET}`).exec(
        req.headers.authorization ?? '',
      );
      if (scim) Object.assign(authenticated, { [AUTHENTICATED_SCIM_HEADER]: scim[1] });
      else if (call.url.startsWith('/scim/v2')) {
        // Any other SCIM token is refused, as identity does.
        res
          .writeHead(401, { 'content-type': 'application/scim+json' })
          .end(JSON.stringify({ status: '401' }));
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json', ...authenticated })
        .end(JSON.stringify({ success: true, data: call }));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}

/** A bounded client like the server's (auto-pipelining, no offline queue, command timeout). */
export function testRedis(t: Test, url = testEnv.redisUrl, commandTimeout = 500): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    commandTimeout,
    connectTimeout: 1000,
    retryStrategy: () => 200,
    lazyConnect: true,
  });
  redis.on('error', () => undefined);
  t.teardown(() => redis.disconnect());
  return redis;
}

export interface Harness {
  identity: IdentityDouble;
  /** Stops answering as identity (NATS then has no responder for its subjects). */
  stopIdentity: () => void;
  jwks: Awaited<ReturnType<typeof startJwks>>;
  upstreams: Record<
    'requests' | 'identity' | 'audit' | 'webhooks',
    Awaited<ReturnType<typeof startUpstream>>
  >;
  nc: NatsConnection;
  names: NatsNames;
  config: GatewayConfig;
  /** Builds (and readies) a gateway instance; several may share the harness. */
  gateway(overrides?: Partial<GatewayConfig>, redisUrl?: string, logger?: Logger): Promise<Gateway>;
}

export async function harness(t: Test, overrides: Partial<GatewayConfig> = {}): Promise<Harness> {
  const { nc, names } = await testNats(t);
  const identity = new IdentityDouble(nc, names);
  const stopIdentity = identity.serve();
  t.teardown(stopIdentity);
  const jwks = await startJwks(t);
  await jwks.addKey();
  const upstreams = {
    requests: await startUpstream(t, 'requests'),
    identity: await startUpstream(t, 'identity'),
    audit: await startUpstream(t, 'audit'),
    webhooks: await startUpstream(t, 'webhooks'),
  };
  const config = gatewayConfig({
    PRINCIPAL_SIGNING_KEY: testEnv.principalKeys.signingKey,
    NATS_NAMESPACE: names.namespace,
    REQUESTS_URL: upstreams.requests.url,
    IDENTITY_URL: upstreams.identity.url,
    AUDIT_URL: upstreams.audit.url,
    WEBHOOKS_URL: upstreams.webhooks.url,
    JWKS_URL: jwks.url,
    OAUTH_ISSUER: ISSUER,
    OAUTH_AUDIENCE: AUDIENCE,
    JWKS_COOLDOWN_MS: 0,
    RATE_LIMIT_PREFIX: `${uniqueName('rl')}:`,
    REDIS_KEY_PREFIX: `${uniqueName('gw')}:`,
    UPSTREAM_TIMEOUT_MS: 2000,
    // The files make dozens of deliberate 401s from 127.0.0.1; the per-address limit on failed
    // authentications has its own test (auth-failures.test.ts), with a low limit.
    AUTH_FAILURES_PER_IP: 100_000,
    ...overrides,
  });
  return {
    identity,
    stopIdentity,
    jwks,
    upstreams,
    nc,
    names,
    config,
    async gateway(more = {}, redisUrl?: string, logger = testLogger('gateway')) {
      // REDIS_COMMAND_TIMEOUT_MS, when a test sets it, bounds this instance's client. With
      // REDIS_CLUSTER_NODES the gateway connects its own client, as in production.
      const redis = more.REDIS_CLUSTER_NODES
        ? undefined
        : testRedis(t, redisUrl, more.REDIS_COMMAND_TIMEOUT_MS ?? 500);
      await redis?.connect().catch(() => undefined);
      const gw = await composeService({
        config: { ...config, ...more },
        logger,
        nc,
        names,
        redis,
      });
      t.teardown(async () => {
        await gw.app.close();
        await gw.close();
      });
      await gw.app.ready();
      await gw.start();
      return gw;
    },
  };
}

export const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

/** A logger that keeps every line it writes (parsed), to see what the gateway recorded of a call. */
export function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: 'gateway',
    level: 'info',
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines, of: (reqId: string) => lines.filter((l) => l.reqId === reqId) };
}

/**
 * POSTs a chunked body (no Content-Length): a first chunk of `first` bytes, a pause of `pauseMs`
 * (in which the gateway may answer whatever it answers without the rest), then up to `chunks`
 * chunks of 16 KiB, one per turn, until the answer comes. Resolves with the answer; write errors
 * after it are expected (the gateway may close), and a network failure without an answer
 * rejects, so it can never pass for a refusal.
 */
export function postChunked(
  port: number,
  path: string,
  headers: Record<string, string>,
  { first = 16 * 1024, pauseMs = 0, chunks = 29 }: { first?: number; pauseMs?: number; chunks?: number } = {},
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer within 10 s')), 10_000);
    let answered = false;
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        headers: { ...headers, 'transfer-encoding': 'chunked' },
      },
      (response) => {
        answered = true;
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', () => undefined);
    req.write(Buffer.alloc(first, 0x61));
    void (async () => {
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      for (let i = 0; i < chunks && !req.destroyed && !answered; i++) {
        req.write(Buffer.alloc(16 * 1024, 0x61));
        await new Promise((r) => setImmediate(r));
      }
      req.end();
    })();
  });
}
