import type { Plan, RateLimits } from '@support-desk/contracts';
import { outboxPlugin } from '@support-desk/platform/store';
import { type Connection, Schema } from 'mongoose';
import { modelOn } from './model.js';

export interface ApiKeyDoc {
  _id: string;
  ownerId: string;
  name: string;
  /** SHA-256 (hex) of the secret part; the value itself is never stored. */
  secretHash: string;
  scopes: string[];
  plan: Plan;
  limits: RateLimits | null;
  allowlist: string[];
  expiresAt: Date | null;
  createdAt: Date;
  createdBy: string;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  rev?: number;
}

const LimitsSchema = new Schema<RateLimits>(
  { general: { type: Number, required: true }, events: { type: Number, required: true } },
  { _id: false },
);

const ApiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: { type: String, required: true },
    ownerId: { type: String, required: true, index: true },
    name: { type: String, required: true },
    secretHash: { type: String, required: true, select: false },
    scopes: { type: [String], default: [] },
    plan: { type: String, required: true },
    limits: { type: LimitsSchema, default: null },
    allowlist: { type: [String], default: [] },
    expiresAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    createdBy: { type: String, required: true },
    lastUsedAt: { type: Date, default: null },
    revokedAt: { type: Date, default: null },
    /** Concurrency token: every update of the aggregate is conditioned on it and bumps it. */
    rev: { type: Number, default: 0 },
  },
  { collection: 'api_keys', versionKey: false },
);
outboxPlugin(ApiKeySchema);

export interface OAuthClientDoc {
  _id: string;
  name: string;
  redirectUris: string[];
  isPublic: boolean;
  /** SHA-256 (hex) of the client secret; null for public clients. */
  secretHash: string | null;
  plan: Plan;
  limits: RateLimits | null;
  createdAt: Date;
  createdBy: string;
  /** Set once revoked: the client can no longer authorize, exchange or use tokens. */
  revokedAt?: Date | null;
  rev?: number;
}

const OAuthClientSchema = new Schema<OAuthClientDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    redirectUris: { type: [String], required: true },
    isPublic: { type: Boolean, required: true },
    secretHash: { type: String, default: null, select: false },
    plan: { type: String, required: true },
    limits: { type: LimitsSchema, default: null },
    createdAt: { type: Date, required: true },
    createdBy: { type: String, required: true },
    revokedAt: { type: Date, default: null },
    /** Concurrency token: every update of the aggregate is conditioned on it and bumps it. */
    rev: { type: Number, default: 0 },
  },
  { collection: 'oauth_clients', versionKey: false },
);
outboxPlugin(OAuthClientSchema);

export interface SettingsDoc {
  _id: string;
  globalAllowlist: string[];
  updatedAt: Date;
  rev?: number;
}

export const SETTINGS_ID = 'global';

const SettingsSchema = new Schema<SettingsDoc>(
  {
    _id: { type: String, required: true },
    globalAllowlist: { type: [String], default: [] },
    updatedAt: { type: Date, required: true },
    /** Concurrency token: every update of the aggregate is conditioned on it and bumps it. */
    rev: { type: Number, default: 0 },
  },
  { collection: 'settings', versionKey: false },
);
outboxPlugin(SettingsSchema);

export const apiKeyModel = (conn: Connection) => modelOn<ApiKeyDoc>(conn, 'ApiKey', ApiKeySchema);
export const oauthClientModel = (conn: Connection) =>
  modelOn<OAuthClientDoc>(conn, 'OAuthClient', OAuthClientSchema);
export const settingsModel = (conn: Connection) => modelOn<SettingsDoc>(conn, 'Settings', SettingsSchema);
