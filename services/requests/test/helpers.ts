import { jetstreamManager } from '@nats-io/jetstream';
import {
  type DomainEvent,
  type GetGroupReply,
  type GetUserReply,
  type GroupSnapshot,
  type NatsNames,
  newId,
  type Principal,
  type Role,
  type UserSnapshot,
} from '@support-desk/contracts';
import {
  createOutboxRelay,
  ensureIndexes,
  type HttpApp,
  type NatsConnection,
  type OutboxRelay,
  serveRpc,
} from '@support-desk/platform';
import {
  asPrincipal,
  type Teardownable,
  testLogger,
  testMongo,
  testNats,
  testPrincipal,
  testUserSnapshot,
} from '@support-desk/platform/testing';
import type { Connection } from 'mongoose';
import { buildApp } from '../src/app.js';
import { defaultRequestsConfig, type RequestsConfig } from '../src/config.js';
import { requestModel } from '../src/store/requests.js';
import { slaAlertModel } from '../src/store/sla-alerts.js';

/** A controllable clock for the app under test. */
export class TestClock {
  constructor(public current = new Date('2030-01-01T09:00:00.000Z')) {}
  now = () => new Date(this.current.getTime());
  advance(ms: number) {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/**
 * A stand-in for identity on the real NATS: serves rpc.getUser / rpc.getGroup from maps and
 * publishes identity-shaped events on the real stream. (A double of a peer service, not of NATS.)
 */
export class IdentityDouble {
  users = new Map<string, UserSnapshot>();
  groups = new Map<string, GroupSnapshot>();
  calls = { getUser: 0, getGroup: 0 };
  constructor(
    private readonly nc: NatsConnection,
    private readonly names: NatsNames,
  ) {}

  serve() {
    const subs = [
      serveRpc<{ id: string }, GetUserReply>(this.nc, this.names.rpc.getUser, async ({ id }) => {
        this.calls.getUser++;
        const user = this.users.get(id);
        return user ? { found: true, user } : { found: false };
      }),
      serveRpc<{ id: string }, GetGroupReply>(this.nc, this.names.rpc.getGroup, async ({ id }) => {
        this.calls.getGroup++;
        const group = this.groups.get(id);
        return group ? { found: true, group } : { found: false };
      }),
    ];
    return () => {
      for (const s of subs) s.unsubscribe();
    };
  }

  addUser(role: Role, overrides: Partial<UserSnapshot> = {}): UserSnapshot {
    const user = testUserSnapshot(role, overrides);
    this.users.set(user.id, user);
    return user;
  }

  /** A principal for a user identity knows. */
  principalOf(user: UserSnapshot, overrides: Partial<Principal> = {}): Principal {
    return testPrincipal(user.role, { userId: user.id, email: user.email, name: user.name, ...overrides });
  }

  /** A user known to identity plus the principal that calls as them. */
  person(role: Role, overrides: Partial<UserSnapshot> = {}) {
    const user = this.addUser(role, overrides);
    return { user, principal: this.principalOf(user) };
  }

  addGroup(name = 'Support'): GroupSnapshot {
    const group = { id: newId('group'), name, deleted: false };
    this.groups.set(group.id, group);
    return group;
  }

  /** Publishes an identity-shaped domain event (what changed, not a snapshot). */
  async publish(type: DomainEvent['type'], resourceId: string, changes?: DomainEvent['changes']) {
    const { jetstream } = await import('@nats-io/jetstream');
    const event: DomainEvent = {
      id: newId('event'),
      type,
      resourceType: type.startsWith('user.') ? 'user' : 'system',
      resourceId,
      actor: { id: 'usr_admin', name: 'Admin', email: 'admin@example.com', role: 'admin' },
      metadata: { userAgent: null, source: 'api', requestId: null },
      timestamp: new Date().toISOString(),
      ...(changes ? { changes } : {}),
    };
    await jetstream(this.nc).publish(this.names.eventSubject(type), JSON.stringify(event), {
      msgID: event.id,
    });
    return event;
  }
}

export interface Harness {
  app: HttpApp;
  conn: Connection;
  nc: NatsConnection;
  names: NatsNames;
  relay: OutboxRelay;
  clock: TestClock;
  identity: IdentityDouble;
  config: RequestsConfig;
  call: (
    principal: Principal,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
  ) => Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  /** Every event published on this test's stream so far (after the relay is idle). */
  events: (filter?: { resourceId?: string; type?: string }) => Promise<DomainEvent[]>;
}

export async function harness(t: Teardownable, overrides: Partial<RequestsConfig> = {}): Promise<Harness> {
  const conn = await testMongo(t, 'req');
  const { nc, names } = await testNats(t);
  const logger = testLogger('requests');
  const clock = new TestClock();
  const config = defaultRequestsConfig({ SLA_MONITOR_ENABLED: false, ...overrides });
  const relay = createOutboxRelay({
    nc,
    models: [requestModel(conn), slaAlertModel(conn)],
    logger,
    pollIntervalMs: 200,
  });
  const identity = new IdentityDouble(nc, names);
  const stopIdentity = identity.serve();
  const app = await buildApp({ config, logger, conn, nc, names, relay, now: clock.now });
  await ensureIndexes(conn);
  await app.core.files.ensureIndexes();
  relay.start();
  t.teardown(async () => {
    await app.close();
    await relay.stop();
    stopIdentity();
  });
  const jsm = await jetstreamManager(nc);
  return {
    app,
    conn,
    nc,
    names,
    relay,
    clock,
    identity,
    config,
    async call(principal, method, url, payload) {
      const res = await app.inject({
        method,
        url,
        headers: await asPrincipal(principal),
        ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
      });
      // FerretDB v1 (local/test store) does not make single-document updates atomic: the relay's
      // outbox removal racing the next write to the same request can lose that write. Tests
      // therefore let the relay settle after each write (MongoDB 7 in production is atomic).
      if (method !== 'GET') await relay.idle();
      const text = res.body;
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // non-JSON (downloads)
      }
      return { status: res.statusCode, body, headers: res.headers };
    },
    async events(filter = {}) {
      await relay.idle();
      const info = await jsm.streams.info(names.eventsStream);
      const out: DomainEvent[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq++) {
        const m = await jsm.streams.getMessage(names.eventsStream, { seq });
        if (!m) continue;
        const e = m.json<DomainEvent>();
        if (filter.resourceId && e.resourceId !== filter.resourceId) continue;
        if (filter.type && e.type !== filter.type) continue;
        out.push(e);
      }
      return out;
    },
  };
}

export const validBody = (overrides: Record<string, unknown> = {}) => ({
  title: 'Printer on fire',
  description: 'The printer on floor 3 is literally on fire.',
  priority: 'high',
  ...overrides,
});
