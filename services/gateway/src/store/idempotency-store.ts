import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-client.js';

/** An answer as stored for replay: status, the headers that describe the body, the body bytes. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The entry of one (credential, key): a claim while the first call runs, then its answer. */
type Entry =
  | { state: 'running'; fingerprint: string; claim: string }
  | { state: 'done'; fingerprint: string; status: number; headers: Record<string, string>; body: string };

export type ClaimOutcome =
  | { kind: 'claimed'; claim: string }
  | { kind: 'running'; fingerprint: string }
  | { kind: 'done'; fingerprint: string; answer: StoredAnswer };

/** Replaces the claim with the answer, only if the claim is still this call's (not expired, not taken over). */
const COMPLETE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1
`;
/** Drops the claim, only if it is still this call's. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

export interface IdempotencyStoreOptions {
  redis: RedisClient;
  /** Key prefix (REDIS_KEY_PREFIX); entries are `<prefix>idem:<credential>:<key>`. */
  prefix: string;
  /** How long an answer is kept for replay (IDEMPOTENCY_TTL_SECONDS). */
  ttlSeconds: number;
  /** How long a claim outlives a gateway that died mid-call. */
  inFlightMs: number;
}

/**
 * Idempotency keys in Redis, the only state, so every gateway replica sees every claim. The
 * first call with a key claims it with one `SET … NX PX <in-flight> GET` (atomic: of any number
 * of concurrent calls on any replicas exactly one gets the claim, the others read what is there);
 * when it is answered, the claim is replaced by the answer for `ttlSeconds`, or dropped (5xx) so a
 * retry can run. Both compare the claim first (a script), so a call that outlived its claim never
 * overwrites a later call's.
 */
export function createIdempotencyStore({ redis, prefix, ttlSeconds, inFlightMs }: IdempotencyStoreOptions) {
  const entryKey = (credential: string, key: string) => `${prefix}idem:${credential}:${key}`;
  return {
    async claim(credential: string, key: string, fingerprint: string): Promise<ClaimOutcome> {
      const claim: Entry = { state: 'running', fingerprint, claim: randomUUID() };
      const value = JSON.stringify(claim);
      const previous = (await redis.call(
        'SET',
        entryKey(credential, key),
        value,
        'NX',
        'PX',
        String(inFlightMs),
        'GET',
      )) as string | null;
      if (previous === null) return { kind: 'claimed', claim: value };
      const entry = JSON.parse(previous) as Entry;
      if (entry.state === 'running') return { kind: 'running', fingerprint: entry.fingerprint };
      return {
        kind: 'done',
        fingerprint: entry.fingerprint,
        answer: { status: entry.status, headers: entry.headers, body: Buffer.from(entry.body, 'base64') },
      };
    },

    /** Stores the answer in place of the claim; false when the claim was no longer this call's. */
    async complete(credential: string, key: string, claim: string, answer: StoredAnswer): Promise<boolean> {
      const { fingerprint } = JSON.parse(claim) as Entry;
      const done: Entry = {
        state: 'done',
        fingerprint,
        status: answer.status,
        headers: answer.headers,
        body: answer.body.toString('base64'),
      };
      const stored = await redis.eval(
        COMPLETE,
        1,
        entryKey(credential, key),
        claim,
        JSON.stringify(done),
        String(ttlSeconds),
      );
      return stored === 1;
    },

    /** Drops the claim (the call failed with a 5xx): a retry with the key runs again. */
    async release(credential: string, key: string, claim: string): Promise<void> {
      await redis.eval(RELEASE, 1, entryKey(credential, key), claim);
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
