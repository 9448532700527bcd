import type { NatsConnection } from '@nats-io/transport-node';
import {
  type DomainEvent,
  EVENT_CATALOGUE,
  EVENT_VERSION,
  type GroupSnapshot,
  type NatsNames,
  newId,
  type Plan,
  type Principal,
  type RateLimits,
  type ResolveApiKeyReply,
  type Role,
  type UserSnapshot,
} from '@support-desk/contracts';
import { requestedId } from '../identity-port.js';
import { serveIdentityRpc } from '../identity-rpc.js';
import { testPrincipal, testUserSnapshot, uniqueName } from './env.js';
import { publishEvent, testVerifier } from './signed.js';

export type OAuthClientRecord = { clientId: string; name: string; plan: Plan; limits: RateLimits | null };

export interface TestKeyOptions {
  scopes?: string[];
  plan?: Plan;
  limits?: RateLimits | null;
  allowlist?: string[];
  expiresAt?: string | null;
  state?: 'revoked' | 'expired';
}

/**
 * A stand-in for the identity service on the real NATS (a double of a peer service, never of
 * NATS): it serves identity's RPC table from maps the test controls, counts the calls, and
 * publishes identity-shaped domain events on the real stream.
 */
export class IdentityDouble {
  keys = new Map<string, ResolveApiKeyReply>();
  users = new Map<string, UserSnapshot>();
  groups = new Map<string, GroupSnapshot>();
  clients = new Map<string, OAuthClientRecord>();
  globalAllowlist: string[] = [];
  calls = { resolveApiKey: 0, getUser: 0, getGroup: 0, getOAuthClient: 0, getSettings: 0 };

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: NatsNames,
  ) {}

  /** Starts answering; returns the function that stops. */
  serve(): () => void {
    const server = serveIdentityRpc(
      this.nc,
      this.names,
      {
        resolveApiKey: async ({ key }) => {
          this.calls.resolveApiKey++;
          const r = this.keys.get(key);
          if (!r)
            return { valid: false, reason: /^sd_key_[a-z0-9]+_.+$/.test(key) ? 'unknown' : 'malformed' };
          if (!r.valid) return r;
          const owner = this.users.get(r.owner.id) ?? r.owner;
          if (owner.status !== 'active') return { valid: false, reason: 'inactive_owner' };
          return { ...r, owner, globalAllowlist: this.globalAllowlist };
        },
        getUser: async (request) => {
          this.calls.getUser++;
          const user = this.users.get(requestedId(request));
          return user ? { found: true, user } : { found: false };
        },
        getGroup: async (request) => {
          this.calls.getGroup++;
          const group = this.groups.get(requestedId(request));
          return group ? { found: true, group } : { found: false };
        },
        getOAuthClient: async (request) => {
          this.calls.getOAuthClient++;
          const client = this.clients.get(requestedId(request));
          return client ? { found: true, client } : { found: false };
        },
        getSettings: async () => {
          this.calls.getSettings++;
          return { globalAllowlist: this.globalAllowlist };
        },
      },
      { verifier: testVerifier() },
    );
    return () => server.stop();
  }

  addUser(role: Role = 'admin', overrides: Partial<UserSnapshot> = {}): UserSnapshot {
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

  /** Creates an API key for `owner` and returns its raw value. */
  addKey(owner: UserSnapshot, o: TestKeyOptions = {}): { raw: string; keyId: string } {
    const keyId = newId('apiKey');
    const raw = `sd_${keyId}_${uniqueName('secret')}`;
    if (o.state) {
      this.keys.set(raw, { valid: false, reason: o.state });
    } else {
      this.keys.set(raw, {
        valid: true,
        keyId,
        owner,
        scopes: o.scopes ?? ['admin'],
        plan: o.plan ?? 'standard',
        limits: o.limits ?? null,
        allowlist: o.allowlist ?? [],
        globalAllowlist: [],
        expiresAt: o.expiresAt ?? null,
      });
    }
    return { raw, keyId };
  }

  addClient(plan: Plan = 'standard', limits: RateLimits | null = null): string {
    const clientId = newId('oauthClient');
    this.clients.set(clientId, { clientId, name: 'Test client', plan, limits });
    return clientId;
  }

  /** Publishes an identity-shaped domain event (what changed, not a snapshot), signed as identity. */
  async publish(type: DomainEvent['type'], resourceId: string, changes?: DomainEvent['changes']) {
    const event: DomainEvent = {
      v: EVENT_VERSION,
      id: newId('event'),
      type,
      resourceType: EVENT_CATALOGUE[type],
      resourceId,
      actor: { id: 'usr_admin', name: 'Admin', email: 'admin@example.com', role: 'admin' },
      metadata: { userAgent: null, source: 'api', requestId: null },
      timestamp: new Date().toISOString(),
      ...(changes ? { changes } : {}),
    };
    await publishEvent(this.nc, this.names, event, 'identity');
    return event;
  }
}
