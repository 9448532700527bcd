import { jetstream } from '@nats-io/jetstream';
import {
  type CredentialNotice,
  type DomainEvent,
  IDENTITY_RPC_CALLERS,
  type IdentityRpcName,
  type NatsNames,
  type Principal,
  type Role,
} from '@support-desk/contracts';
import type { HttpApp } from '@support-desk/platform/http';
import type { NatsConnection, OutboxRelay } from '@support-desk/platform/messaging';
import {
  asCaller,
  signCallsLikeTheGateway,
  eventually,
  type Teardownable,
  testCountedMongo,
  testLogger,
  testMongo,
  testNats,
  testEnv,
  testPrincipal,
  testSigner,
  uniqueName,
} from '@support-desk/platform/testing';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection } from 'mongoose';
import { composeService } from '../src/composition.js';
import { type IdentityServiceConfig, loadIdentityServiceConfig } from '../src/config.js';
import { apiKeyModel, oauthClientModel } from '../src/store/credentials.js';
import { grantModel, loginAttemptModel, sessionModel } from '../src/store/oauth.js';
import { userModel } from '../src/store/users.js';
import type { Deps } from '../src/use-cases/deps.js';

/** The identity database's collections, for assertions on what is stored. */
export const storedModels = (conn: Connection) => ({
  users: userModel(conn),
  apiKeys: apiKeyModel(conn),
  oauthClients: oauthClientModel(conn),
  grants: grantModel(conn),
  sessions: sessionModel(conn),
  loginAttempts: loginAttemptModel(conn),
});

/** Collects every message of a stream (ordered consumer from the start) for assertions. */
export async function collect<T>(t: Teardownable, nc: NatsConnection, stream: string) {
  const js = jetstream(nc);
  const consumer = await js.consumers.get(stream);
  const messages = await consumer.consume();
  const items: T[] = [];
  (async () => {
    for await (const m of messages) items.push(m.json<T>());
  })().catch(() => undefined);
  t.teardown(() => messages.close());
  return items;
}

export interface Harness {
  app: HttpApp;
  deps: Deps;
  conn: Connection;
  /** What is stored, read directly (assertions only). */
  stored: ReturnType<typeof storedModels>;
  relay: OutboxRelay;
  names: NatsNames;
  nc: NatsConnection;
  config: IdentityServiceConfig;
  events: DomainEvent[];
  notices: CredentialNotice[];
  /** Moves the injected clock forward. */
  advance(ms: number): void;
  /** Environment for an admin tool (deskctl) that targets this test's database and namespace. */
  cliEnv: Record<string, string>;
  headers(role?: Role, overrides?: Partial<Principal>): Promise<Record<string, string>>;
  waitForEvent(match: (e: DomainEvent) => boolean, what?: string): Promise<DomainEvent>;
  waitForNotice(match: (n: CredentialNotice) => boolean, what?: string): Promise<CredentialNotice>;
}

export interface HarnessOptions {
  /** Command monitoring on the connection, for `roundTripCounter` (round-trips.test.ts). */
  countCommands?: boolean;
}

export async function harness(
  t: Teardownable,
  env: Record<string, string> = {},
  { countCommands = false }: HarnessOptions = {},
): Promise<Harness> {
  const conn = countCommands ? await testCountedMongo(t, 'identity') : await testMongo(t, 'identity');
  const { nc, names } = await testNats(t);
  const config = loadIdentityServiceConfig({
    PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys,
    LOG_LEVEL: 'silent',
    MONGO_URL: testEnv.mongoUrl,
    NATS_URL: testEnv.natsUrl,
    IDENTITY_DATA_DIR: join(tmpdir(), uniqueName('sd-identity-')),
    ...env,
  });
  t.teardown(() => rm(config.IDENTITY_DATA_DIR, { recursive: true, force: true }));
  let offset = 0;
  const logger = testLogger('identity');
  const service = await composeService({
    config,
    conn,
    nc,
    names,
    logger,
    clock: () => new Date(Date.now() + offset),
  });
  await service.start();
  const { deps, relay } = service;
  const app = signCallsLikeTheGateway(service.app, 'identity');
  t.teardown(async () => {
    await app.close();
    await service.close();
  });
  const events = await collect<DomainEvent>(t, nc, names.eventsStream);
  const notices = await collect<CredentialNotice>(t, nc, names.noticesStream);
  return {
    app,
    deps,
    conn,
    stored: storedModels(conn),
    relay,
    names,
    nc,
    config,
    events,
    notices,
    cliEnv: {
      MONGO_URL: config.MONGO_URL,
      NATS_URL: config.NATS_URL,
      NATS_NAMESPACE: names.namespace,
      MONGO_DB: conn.name,
      IDENTITY_DATA_DIR: config.IDENTITY_DATA_DIR,
    },
    advance: (ms) => {
      offset += ms;
    },
    headers: async (role = 'admin', overrides = {}) => asCaller(testPrincipal(role, overrides)),
    waitForEvent: (match, what = 'event') =>
      eventually(() => events.find(match), { timeoutMs: 10_000, what }),
    waitForNotice: (match, what = 'notice') =>
      eventually(() => notices.find(match), { timeoutMs: 10_000, what }),
  };
}

/** How a test asks one of identity's RPC operations: signed as a service allowed to ask it. */
export const callerOf = (name: IdentityRpcName) => ({ signer: testSigner(IDENTITY_RPC_CALLERS[name][0]!) });

/** JSON body of an inject response. */
export const body = (res: { body: string }): any => JSON.parse(res.body);
