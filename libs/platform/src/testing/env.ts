import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  type NatsNames,
  natsNames,
  type Principal,
  PUBLIC_ROUTES,
  type Role,
  ROLE_SCOPES,
  newId,
  type UserSnapshot,
} from '@support-desk/contracts';
import type { Connection } from 'mongoose';
import { createLogger, type Logger } from '../logger.js';
import { connectMongo } from '../mongo.js';
import { connectNats, jetstreamApi, type NatsConnection } from '../nats.js';
import { provisionStreams } from '../streams.js';
import type { BodyOfCall } from '../body-binding.js';
import { type BoundCall, createPrincipalSigner } from '../principal.js';

/** What a tap `t` offers that the helpers need (kept structural so this module does not import tap). */
export interface Teardownable {
  teardown(fn: () => unknown): void;
  /** Whether the test has passed so far (tap's `t.passing()`), e.g. to keep logs of a failure. */
  passing?(): boolean;
}

/** The real servers the infra script started (npm test exports these). */
export const testEnv = {
  mongoUrl: process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27027',
  natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4223',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6380',
  /** This test process's gateway key pair (PEM): services verify with `verifyKeys`. */
  principalKeys: testPrincipalKeys(),
};

/** A fresh Ed25519 key pair, as `PRINCIPAL_SIGNING_KEY` / `PRINCIPAL_VERIFY_KEYS` hold them. */
export function testPrincipalKeys(): { signingKey: string; verifyKeys: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    signingKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    verifyKeys: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * The PostgreSQL cluster under FerretDB that the infra script runs (`SD_POSTGRES_URL`, which
 * `npm test` exports), as `pgQuery` reaches it; null when the store is not FerretDB on PostgreSQL.
 */
export function sharedPostgres(): { host: string; port: number; user: string; database: string } | null {
  const url = process.env.SD_POSTGRES_URL;
  if (!url) return null;
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port), user: u.username, database: u.pathname.slice(1) };
}

/** A name no other test file uses: databases, NATS namespaces, Redis key prefixes. */
export function uniqueName(prefix = 't'): string {
  return `${prefix}${process.pid.toString(36)}${randomBytes(4).toString('hex')}`.toLowerCase();
}

export function testLogger(service = 'test'): Logger {
  return createLogger({ service, level: process.env.TEST_LOG_LEVEL ?? 'silent' });
}

/** A connection to a fresh database, dropped at teardown. */
export async function testMongo(t: Teardownable, prefix = 'test'): Promise<Connection> {
  const conn = await connectMongo({ url: testEnv.mongoUrl, dbName: uniqueName(`${prefix}_`) });
  t.teardown(async () => {
    await conn.dropDatabase().catch(() => undefined);
    await conn.close();
  });
  return conn;
}

/**
 * A NATS connection with its own namespace, its streams provisioned as the operator's step does,
 * removed at teardown.
 */
export async function testNats(t: Teardownable): Promise<{ nc: NatsConnection; names: NatsNames }> {
  const nc = await connectNats({ url: testEnv.natsUrl, name: 'test' });
  const names = natsNames(uniqueName('t'));
  await provisionStreams(nc, names);
  const jsm = await jetstreamApi(nc);
  t.teardown(async () => {
    await jsm.streams.delete(names.eventsStream).catch(() => undefined);
    await jsm.streams.delete(names.noticesStream).catch(() => undefined);
    await nc.drain().catch(() => undefined);
  });
  return { nc, names };
}

export function testPrincipal(role: Role = 'admin', overrides: Partial<Principal> = {}): Principal {
  const userId = overrides.userId ?? newId('user');
  return {
    userId,
    email: `${role}-${userId.slice(-6)}@example.com`,
    name: `Test ${role}`,
    role,
    scopes: [...ROLE_SCOPES[role]],
    credential: { type: 'api_key', id: newId('apiKey') },
    clientIp: '127.0.0.1',
    userAgent: 'tap',
    requestId: newId('event'),
    ...overrides,
  };
}

/** A user as identity reports it (RPC and read models), for doubles of identity in tests. */
export function testUserSnapshot(role: Role = 'agent', overrides: Partial<UserSnapshot> = {}): UserSnapshot {
  const id = overrides.id ?? newId('user');
  return {
    id,
    email: `${role}-${id.slice(-6)}@example.com`,
    name: `User ${id.slice(-6)}`,
    role,
    status: 'active',
    isVip: false,
    groups: [],
    updatedAt: new Date().toISOString(),
    ...overrides,
  };
}

const signer = createPrincipalSigner(testEnv.principalKeys.signingKey);

/** The header the gateway would send with this very call to `audience`, for `app.inject`. */
export function asPrincipal(principal: Principal, call: BoundCall): Record<string, string> {
  return { 'x-sd-principal': signer(principal, call) };
}

/** Polls `check` until it returns a truthy value; bounded in time. The last error or value is reported. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}` +
      (lastError
        ? `: ${lastError instanceof Error ? lastError.message : String(lastError)}`
        : ` (last: ${String(last)})`),
  );
}

/** The contract's streamed routes (uploads), as patterns of their paths. */
const STREAMED_ROUTES = PUBLIC_ROUTES.filter((r) => r.stream).map((r) => ({
  method: r.method,
  path: new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}$`),
}));

/**
 * The body an `inject` sends, as the gateway binds it: on a streamed route of the contract (an
 * upload, which the gateway streams on) a one-time id; elsewhere the bytes light-my-request
 * sends (an object as its JSON).
 */
export function bodyAsSent(method: string, url: string, payload: unknown): BodyOfCall {
  const path = url.split('?')[0];
  if (STREAMED_ROUTES.some((r) => r.method === method.toUpperCase() && r.path.test(path)))
    return { streamed: true };
  if (payload === undefined || payload === null) return {};
  return {
    body: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
  };
}

/** A header naming the caller of an `inject` (see `signCallsLikeTheGateway`); never sent to a real service. */
export const TEST_CALLER_HEADER = 'x-test-caller';

/** Headers naming `principal` as the caller; the app's `inject` signs the assertion for each call. */
export function asCaller(principal: Principal): Record<string, string> {
  return { [TEST_CALLER_HEADER]: Buffer.from(JSON.stringify(principal)).toString('base64url') };
}

type Injectable = { inject: (...args: never[]) => unknown };

/**
 * Makes `app.inject` play the gateway: a call whose headers name a caller (`asCaller`) gets the
 * principal assertion the gateway would sign for that very call (audience, method, path and
 * query), so tests can reuse one set of headers for many calls.
 */
export function signCallsLikeTheGateway<A extends Injectable>(app: A, audience: string): A {
  const inject = (app.inject as (opts: unknown) => unknown).bind(app);
  (app as { inject: unknown }).inject = (opts: unknown) => {
    if (typeof opts !== 'object' || opts === null) return inject(opts);
    const o = opts as {
      method?: string;
      url?: string;
      path?: string;
      query?: Record<string, string>;
      headers?: Record<string, string>;
      payload?: unknown;
      body?: unknown;
    };
    const caller = o.headers?.[TEST_CALLER_HEADER];
    if (!caller) return inject(opts);
    const { [TEST_CALLER_HEADER]: _named, ...headers } = o.headers ?? {};
    const { query, path, ...rest } = o;
    // The query goes into the URL here, so the call signed is exactly the call the app receives.
    let url = o.url ?? path ?? '/';
    if (query && Object.keys(query).length > 0) {
      url += `${url.includes('?') ? '&' : '?'}${new URLSearchParams(query).toString()}`;
    }
    // As an HTTP client sends it (a space becomes %20), which is what the app sees as request.url.
    const sent = new URL(url, 'http://test.invalid');
    url = `${sent.pathname}${sent.search}`;
    const principal = JSON.parse(Buffer.from(caller, 'base64url').toString()) as Principal;
    const method = (o.method ?? 'GET').toUpperCase();
    const call = { audience, method, url, ...bodyAsSent(method, url, o.payload ?? o.body) };
    return inject({ ...rest, url, headers: { ...headers, ...asPrincipal(principal, call) } });
  };
  return app;
}
