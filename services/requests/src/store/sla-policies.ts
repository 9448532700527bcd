import type { BusinessCalendar, RequestStatus, SlaPolicyMatch, SlaTargets } from '@support-desk/contracts';
import { type AggregateDecision, isDuplicateKeyError, type OutboxEntry } from '@support-desk/platform/core';
import { insertWithOutbox, outboxPlugin, updateAggregate } from '@support-desk/platform/store';
import { type Connection, type Model, Schema } from 'mongoose';

/** One SLA policy. Deleted ones stay (soft delete) so their last event can still be relayed. */
export interface SlaPolicyRecord {
  _id: string;
  name: string;
  /**
   * `name` while the policy lives, its `_id` once deleted: a unique index on it keeps live names
   * unique on MongoDB and FerretDB alike and frees a deleted policy's name.
   */
  liveName: string;
  description: string;
  position: number;
  match: SlaPolicyMatch;
  targets: SlaTargets;
  calendar: BusinessCalendar;
  pauseStatuses: RequestStatus[];
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  rev: number;
}

const SlaPolicySchema = new Schema<SlaPolicyRecord>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    liveName: { type: String, required: true, unique: true },
    description: { type: String, default: '' },
    position: { type: Number, required: true },
    match: { type: Schema.Types.Mixed, required: true },
    targets: { type: Schema.Types.Mixed, required: true },
    calendar: { type: Schema.Types.Mixed, required: true },
    pauseStatuses: { type: [String], default: [] },
    deletedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    rev: { type: Number, required: true, default: 0 },
  },
  { collection: 'sla_policies', versionKey: false, minimize: false },
);
outboxPlugin(SlaPolicySchema);

type SlaPolicyModel = Model<SlaPolicyRecord>;

export function slaPolicyModel(conn: Connection): SlaPolicyModel {
  return (
    (conn.models.SlaPolicy as SlaPolicyModel) ?? conn.model<SlaPolicyRecord>('SlaPolicy', SlaPolicySchema)
  );
}

/** The order policies are tried in: position, then the older first. */
const TRIED_ORDER = { position: 1, createdAt: 1, _id: 1 } as const;

export interface SlaPolicyCacheOptions {
  /** How long the policies read for picking stay in memory (0: read on every pick). */
  ttlMs: number;
  clock: () => Date;
}

/**
 * SLA policies: a small collection, read whole in the order they are tried. What a create picks
 * from is kept `ttlMs` (a create then costs no extra round trip); this replica's own changes drop
 * it at once, another replica's reach it within `ttlMs`.
 */
export function createSlaPoliciesRepository(conn: Connection, cache: SlaPolicyCacheOptions) {
  const model = slaPolicyModel(conn);
  const isLive = (doc: Pick<SlaPolicyRecord, 'deletedAt'>) => doc.deletedAt == null;
  const readLive = () => model.find({ deletedAt: null }).sort(TRIED_ORDER).lean<SlaPolicyRecord[]>().exec();
  let kept: { policies: SlaPolicyRecord[]; until: number } | null = null;
  return {
    /** Every live policy in the order they are tried (at most SLA_POLICY_LIMITS.policies). */
    live(): Promise<SlaPolicyRecord[]> {
      return readLive();
    },

    /** The live policies to pick from: as `live`, kept in memory up to `ttlMs`. */
    async forPicking(): Promise<SlaPolicyRecord[]> {
      const now = cache.clock().getTime();
      if (kept && now < kept.until) return kept.policies;
      const policies = await readLive();
      if (cache.ttlMs > 0) kept = { policies, until: now + cache.ttlMs };
      return policies;
    },

    async find(id: string): Promise<SlaPolicyRecord | null> {
      const doc = await model.findById(id).lean<SlaPolicyRecord>().exec();
      return doc && isLive(doc) ? doc : null;
    },

    /** Inserts the policy with its event; false when a live policy has its name. */
    async insert(record: SlaPolicyRecord, outbox: OutboxEntry[]): Promise<boolean> {
      kept = null;
      try {
        await insertWithOutbox(model, record, outbox);
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },

    /** Read-decide-write of one live policy (compare-and-set on `rev`; 404 when gone). */
    update<R>(
      id: string,
      decide: (current: SlaPolicyRecord) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
    ): Promise<R> {
      kept = null;
      return updateAggregate<SlaPolicyRecord, R>(model, id, decide, { what: 'SLA policy', visible: isLive });
    },
  };
}

export type SlaPoliciesRepository = ReturnType<typeof createSlaPoliciesRepository>;
