import { outboxPlugin } from '@support-desk/platform/store';
import { type Connection, Schema } from 'mongoose';
import { modelOn } from './model.js';

/**
 * One authorization: the code it started from and the refresh-token family it produced. Codes
 * and refresh tokens are `<grantId>.<secret>`; only SHA-256 hashes of the secrets are kept.
 */
export interface GrantDoc {
  _id: string;
  clientId: string;
  userId: string;
  scopes: string[];
  redirectUri: string;
  codeHash: string;
  codeChallenge: string | null;
  codeExpiresAt: Date;
  codeUsedAt: Date | null;
  refreshHash: string | null;
  /** Hashes of rotated refresh tokens: presenting one again revokes the family. */
  usedRefreshHashes: string[];
  refreshExpiresAt: Date | null;
  revokedAt: Date | null;
  revokedReason: string | null;
  createdAt: Date;
  /**
   * The hour (`hourKey`) its first end falls in: the code's expiry while unredeemed, the refresh
   * family's expiry, or the revocation, whichever is earliest. Housekeeping reads spent grants by
   * hour (the platform's due-hours.ts); the repository keeps it up to date on every write.
   */
  endsHour?: string;
  rev?: number;
}

const GrantSchema = new Schema<GrantDoc>(
  {
    _id: { type: String, required: true },
    clientId: { type: String, required: true },
    userId: { type: String, required: true, index: true },
    scopes: { type: [String], default: [] },
    redirectUri: { type: String, required: true },
    codeHash: { type: String, required: true },
    codeChallenge: { type: String, default: null },
    codeExpiresAt: { type: Date, required: true },
    codeUsedAt: { type: Date, default: null },
    refreshHash: { type: String, default: null },
    usedRefreshHashes: { type: [String], default: [] },
    refreshExpiresAt: { type: Date, default: null },
    revokedAt: { type: Date, default: null },
    revokedReason: { type: String, default: null },
    createdAt: { type: Date, required: true },
    endsHour: { type: String },
    /** Concurrency token: every update of the aggregate is conditioned on it and bumps it. */
    rev: { type: Number, default: 0 },
  },
  { collection: 'oauth_grants', versionKey: false },
);
outboxPlugin(GrantSchema);
// Housekeeping's "spent grant" conditions (app/housekeeping.ts), one index per branch of its $or.
GrantSchema.index({ codeExpiresAt: 1 });
GrantSchema.index({ refreshExpiresAt: 1 });
GrantSchema.index({ revokedAt: 1 });
GrantSchema.index({ userId: 1, revokedAt: 1 });
GrantSchema.index({ endsHour: 1 });

/** When a grant first ends (see `endsHour`); null while nothing of it can expire. */
export function grantEnd(
  grant: Pick<GrantDoc, 'codeUsedAt' | 'codeExpiresAt' | 'refreshExpiresAt' | 'revokedAt'>,
) {
  const ends = [grant.codeUsedAt ? null : grant.codeExpiresAt, grant.refreshExpiresAt, grant.revokedAt]
    .filter((d): d is Date => d != null)
    .map((d) => new Date(d).getTime());
  return ends.length > 0 ? Math.min(...ends) : null;
}

/** A browser login session at the authorization server; `_id` is the SHA-256 of the cookie value. */
export interface SessionDoc {
  _id: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  /** The hour (`hourKey`) it expires in: housekeeping reads expired sessions by hour. */
  expiresHour?: string;
}

const SessionSchema = new Schema<SessionDoc>(
  {
    _id: { type: String, required: true },
    userId: { type: String, required: true, index: true },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    expiresHour: { type: String },
  },
  { collection: 'oauth_sessions', versionKey: false },
);
SessionSchema.index({ expiresAt: 1 });
SessionSchema.index({ expiresHour: 1 });

/** Failed-login counters, keyed `pair:<address>|<email>` or `ip:<address>`, in fixed windows. */
export interface LoginAttemptDoc {
  _id: string;
  failures: number;
  windowStart: Date;
  lastFailureAt?: Date;
  /** The hour (`hourKey`) its window started in: housekeeping reads lapsed counters by hour. */
  windowHour?: string;
}

const LoginAttemptSchema = new Schema<LoginAttemptDoc>(
  {
    _id: { type: String, required: true },
    failures: { type: Number, required: true },
    windowStart: { type: Date, required: true },
    lastFailureAt: { type: Date },
    windowHour: { type: String },
  },
  { collection: 'login_attempts', versionKey: false },
);
LoginAttemptSchema.index({ windowStart: 1 });
LoginAttemptSchema.index({ windowHour: 1 });

export const grantModel = (conn: Connection) => modelOn<GrantDoc>(conn, 'Grant', GrantSchema);
export const sessionModel = (conn: Connection) => modelOn<SessionDoc>(conn, 'Session', SessionSchema);
export const loginAttemptModel = (conn: Connection) =>
  modelOn<LoginAttemptDoc>(conn, 'LoginAttempt', LoginAttemptSchema);
