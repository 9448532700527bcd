import { jetstream } from '@nats-io/jetstream';
import type { CredentialNotice, DomainEvent, NatsNames, Principal, Role } from '@support-desk/contracts';
import type { HttpApp, NatsConnection } from '@support-desk/platform';
import {
  asPrincipal,
  eventually,
  type Teardownable,
  testLogger,
  testMongo,
  testNats,
  testPrincipal,
} from '@support-desk/platform/testing';
import { buildApp } from '../src/app.js';
import type { Deps } from '../src/app/context.js';
import { type IdentityConfig, loadIdentityConfig } from '../src/config.js';
import { createRuntime } from '../src/runtime.js';
import { ensureIndexes } from '@support-desk/platform';

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
  names: NatsNames;
  nc: NatsConnection;
  config: IdentityConfig;
  events: DomainEvent[];
  notices: CredentialNotice[];
  /** Moves the injected clock forward. */
  advance(ms: number): void;
  headers(role?: Role, overrides?: Partial<Principal>): Promise<Record<string, string>>;
  waitForEvent(match: (e: DomainEvent) => boolean, what?: string): Promise<DomainEvent>;
  waitForNotice(match: (n: CredentialNotice) => boolean, what?: string): Promise<CredentialNotice>;
}

export async function harness(t: Teardownable, env: Record<string, string> = {}): Promise<Harness> {
  const conn = await testMongo(t, 'identity');
  const { nc, names } = await testNats(t);
  const config = loadIdentityConfig({
    LOG_LEVEL: 'silent',
    IDENTITY_DATA_DIR: '/tmp/sd-identity-test',
    ...env,
  });
  let offset = 0;
  const logger = testLogger('identity');
  const { deps, relay } = createRuntime({
    config,
    conn,
    nc,
    names,
    logger,
    clock: () => new Date(Date.now() + offset),
  });
  await ensureIndexes(conn);
  relay!.start();
  const app = await buildApp({ ...deps });
  t.teardown(async () => {
    await app.close();
    await relay!.stop();
  });
  const events = await collect<DomainEvent>(t, nc, names.eventsStream);
  const notices = await collect<CredentialNotice>(t, nc, names.noticesStream);
  return {
    app,
    deps,
    names,
    nc,
    config,
    events,
    notices,
    advance: (ms) => {
      offset += ms;
    },
    headers: (role = 'admin', overrides = {}) => asPrincipal(testPrincipal(role, overrides)),
    waitForEvent: (match, what = 'event') =>
      eventually(() => events.find(match), { timeoutMs: 10_000, what }),
    waitForNotice: (match, what = 'notice') =>
      eventually(() => notices.find(match), { timeoutMs: 10_000, what }),
  };
}

/** JSON body of an inject response. */
// biome-ignore lint/suspicious/noExplicitAny: test convenience
export const body = (res: { body: string }): any => JSON.parse(res.body);
