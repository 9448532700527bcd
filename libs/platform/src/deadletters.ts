import { type Connection, Schema } from 'mongoose';
import type { DeadLetter } from './consumer.js';

const DeadLetterSchema = new Schema<DeadLetter>(
  {
    stream: String,
    consumer: String,
    subject: String,
    streamSequence: Number,
    deliveryCount: Number,
    reason: String,
    data: String,
    failedAt: { type: Date, index: true },
  },
  { collection: 'dead_letters', versionKey: false },
);

/** A service's dead-letter collection, for `runConsumer({ deadLetter })`. */
export function deadLetterStore(conn: Connection) {
  const model = conn.models.DeadLetter ?? conn.model('DeadLetter', DeadLetterSchema);
  return {
    model,
    write: async (record: DeadLetter) => {
      await model.create(record);
    },
  };
}
