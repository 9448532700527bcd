import { insertWithOutbox, outboxPlugin } from '@support-desk/platform/store';
import { isDuplicateKeyError, type OutboxEntry } from '@support-desk/platform/core';
import { type Connection, type Model, Schema } from 'mongoose';

/**
 * One document per SLA alert emitted: `_id` = `<requestId>:<clock>:<kind>:<target ms>`. Inserting
 * it (with the event in its outbox) is the exactly-once claim: a unique-key insert is atomic on
 * MongoDB and on FerretDB alike, whichever replica tries first wins and the others get E11000.
 */
export interface SlaAlertRecord {
  _id: string;
  requestId: string;
  clock: 'response' | 'resolution';
  kind: 'warning' | 'breach';
  target: Date;
  emittedAt: Date;
}

const SlaAlertSchema = new Schema<SlaAlertRecord>(
  {
    _id: { type: String, required: true },
    requestId: { type: String, required: true, index: true },
    clock: { type: String, required: true },
    kind: { type: String, required: true },
    target: { type: Date, required: true },
    emittedAt: { type: Date, required: true },
  },
  { collection: 'sla_alerts', versionKey: false },
);
outboxPlugin(SlaAlertSchema);

type SlaAlertModel = Model<SlaAlertRecord>;

export function slaAlertModel(conn: Connection): SlaAlertModel {
  return (conn.models.SlaAlert as SlaAlertModel) ?? conn.model<SlaAlertRecord>('SlaAlert', SlaAlertSchema);
}

export const alertId = (requestId: string, clock: string, kind: string, target: Date) =>
  `${requestId}:${clock}:${kind}:${target.getTime()}`;

/** SLA alerts emitted: the exactly-once claim of each warning and breach. */
export function createSlaAlertsRepository(conn: Connection) {
  const model = slaAlertModel(conn);
  return {
    /**
     * Inserts the alert with its event; true when this call made the claim, false when another
     * pass or replica already had (the unique `_id`).
     */
    async claim(alert: SlaAlertRecord, outbox: OutboxEntry[]): Promise<boolean> {
      try {
        await insertWithOutbox(model, alert, outbox);
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },
  };
}

export type SlaAlertsRepository = ReturnType<typeof createSlaAlertsRepository>;
