import type { Changes } from '@support-desk/contracts';
import { dayKey, hourKey } from '@support-desk/platform/core';
import { type Connection, Schema } from 'mongoose';

/**
 * One entry of `changes` as stored. Field names are values, not keys, because they may contain
 * dots (`sla.responseStatus`), which FerretDB refuses as keys and MongoDB only half supports.
 */
export interface StoredChange {
  field: string;
  from: unknown;
  to: unknown;
}

export function toStoredChanges(changes: Changes): StoredChange[] {
  return Object.entries(changes).map(([field, c]) => ({ field, from: c.from, to: c.to }));
}

/** The public `changes` object, or undefined when nothing changed (also reads the object form). */
export function fromStoredChanges(stored: StoredChange[] | Changes | undefined): Changes | undefined {
  if (!stored) return undefined;
  const changes = Array.isArray(stored)
    ? Object.fromEntries(stored.map((c) => [c.field, { from: c.from ?? null, to: c.to ?? null }]))
    : stored;
  return Object.keys(changes).length > 0 ? changes : undefined;
}

/**
 * An event as stored: the published envelope, `_id` = event id, `timestamp` as a BSON Date. Its
 * type (and resource type, actor role, source) may be one a newer producer introduced.
 */
export interface StoredEvent {
  _id: string;
  type: string;
  resourceType: string;
  resourceId: string;
  actor: { id: string; name: string; email: string; role: string };
  changes?: StoredChange[];
  metadata: { userAgent: string | null; source: string; requestId: string | null; traceId?: string };
  timestamp: Date;
  ipAddress?: string;
  /** The resource after the change, as the producer wrote it (request.* and user.* events since issue 29). */
  snapshot?: Record<string, unknown>;
  /** When the batch holding it was written (ingestion lag = storedAt - timestamp). */
  storedAt: Date;
  /**
   * The hour (`hourKey`) of `timestamp`: the retention sweeper reads expired events by hour, an
   * equality the store can answer without decoding every event (retention.ts). Absent on events
   * stored before it existed (the sweeper's full passes cover them).
   */
  hour?: string;
  /**
   * The list keys (issue 31): the day (`dayKey`) of `timestamp`, which with `hour` the lists walk
   * (`hourWalk`), and the actor's id and role at the top, where FerretDB can push an equality on
   * them down (it pushes no dotted path). Set at insert (`listKeys`); events stored before they
   * existed get them at start (`completeListKeys`).
   */
  day?: string;
  actorId?: string;
  actorRole?: string;
}

/** The list keys of an event (see `StoredEvent`), from its timestamp and actor. */
export function listKeys(e: Pick<StoredEvent, 'timestamp' | 'actor'>) {
  const valid = !Number.isNaN(e.timestamp.getTime());
  return {
    // An event without a valid time (none is stored so) is in no hour or day: no list walks it.
    hour: valid ? hourKey(e.timestamp) : '',
    day: valid ? dayKey(e.timestamp) : '',
    actorId: e.actor.id,
    actorRole: e.actor.role,
  };
}

const ActorSchema = new Schema(
  { id: String, name: String, email: String, role: String },
  { _id: false, versionKey: false },
);

const MetadataSchema = new Schema(
  { userAgent: String, source: String, requestId: String, traceId: String },
  { _id: false, versionKey: false },
);

const EventSchema = new Schema<StoredEvent>(
  {
    _id: { type: String, required: true },
    type: { type: String, required: true },
    resourceType: { type: String, required: true },
    resourceId: { type: String, required: true },
    actor: { type: ActorSchema, required: true },
    changes: { type: Schema.Types.Mixed },
    metadata: { type: MetadataSchema, required: true },
    timestamp: { type: Date, required: true },
    ipAddress: { type: String },
    snapshot: { type: Schema.Types.Mixed },
    storedAt: { type: Date, required: true },
    hour: { type: String },
    day: { type: String },
    actorId: { type: String },
    actorRole: { type: String },
  },
  { collection: 'events', versionKey: false, minimize: false },
);

// Each filter served together with the newest-first order (timestamp desc, _id desc tiebreak).
EventSchema.index({ timestamp: -1, _id: -1 }, { name: 'timestamp' });
EventSchema.index({ type: 1, timestamp: -1, _id: -1 }, { name: 'type_timestamp' });
EventSchema.index({ resourceType: 1, resourceId: 1, timestamp: -1, _id: -1 }, { name: 'resource_timestamp' });
EventSchema.index({ actorId: 1, timestamp: -1, _id: -1 }, { name: 'actor_timestamp' });
EventSchema.index({ actorRole: 1, timestamp: -1, _id: -1 }, { name: 'actor_role_key_timestamp' });
// The hours and days the lists walk: on FerretDB/PostgreSQL the GIN indexes beside these
// (scripts/infra/postgres-indexes.mjs) make each step's equality an index lookup.
EventSchema.index({ hour: 1, timestamp: -1, _id: -1 }, { name: 'hour_timestamp' });
EventSchema.index({ day: 1, timestamp: -1, _id: -1 }, { name: 'day_timestamp' });

/** The events model on the audit connection (registered once per connection). */
export function eventModel(conn: Connection) {
  return conn.models.AuditEvent ?? conn.model<StoredEvent>('AuditEvent', EventSchema);
}
