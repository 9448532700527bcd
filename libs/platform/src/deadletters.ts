import {
  type DeadLetterReplies,
  type DeadLetterRequest,
  type DeadLetterSummary,
  type NatsNames,
  OPERATOR_CALLERS,
} from '@support-desk/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import { type Connection, Schema } from 'mongoose';
import type { Logger } from './logger.js';
import type { MessageSignature, MessageVerifier } from './message-signing.js';
import { serveRpc } from './rpc.js';

/** A message its consumer gave up on, kept for an operator to read and replay. */
export interface DeadLetter {
  stream: string;
  consumer: string;
  subject: string;
  streamSequence: number;
  deliveryCount: number;
  reason: string;
  /** The message as text (U+FFFD where it was not UTF-8 or held U+0000). */
  data: string;
  /** The message's exact bytes, kept when `data` is not exact (see `messageText`). */
  dataBase64?: string;
  /**
   * Its sender's signature (null: it had none), so that a replay is checked like the delivery
   * was. Letters written before messages were signed lack the field.
   */
  signature?: MessageSignature | null;
  failedAt: Date;
}

const DeadLetterSchema = new Schema<DeadLetter>(
  {
    stream: String,
    consumer: String,
    subject: String,
    streamSequence: Number,
    deliveryCount: Number,
    reason: String,
    data: String,
    dataBase64: String,
    // The sender's signature (null: unsigned), checked again on replay; absent from the letters
    // written before messages were signed.
    signature: {
      type: { signer: String, signedAt: String, signature: String },
      _id: false,
      default: undefined,
    },
    failedAt: { type: Date, index: true },
  },
  { collection: 'dead_letters', versionKey: false },
);

const exactText = new TextDecoder('utf-8', { fatal: true });

/**
 * A dead letter's message as stored: its text, readable by operators, and its bytes as well when
 * the text is not exact. A poison message may be any bytes; text that is not UTF-8 does not
 * survive decoding, and PostgreSQL (under the local store) refuses a document holding U+0000, so
 * without the bytes such a letter was either lost to replay or never written (the message then
 * went back to JetStream again and again).
 */
export function messageText(data: Uint8Array): Pick<DeadLetter, 'data' | 'dataBase64'> {
  let text: string | undefined;
  try {
    text = exactText.decode(data);
  } catch {
    // not UTF-8
  }
  if (text !== undefined && !text.includes('\u0000')) return { data: text };
  const readable = (text ?? new TextDecoder().decode(data)).replaceAll('\u0000', '\uFFFD');
  return { data: readable, dataBase64: Buffer.from(data).toString('base64') };
}

/** The bytes a dead letter's message had. */
export const messageBytes = (d: Pick<DeadLetter, 'data' | 'dataBase64'>): Uint8Array =>
  d.dataBase64 ? Buffer.from(d.dataBase64, 'base64') : new TextEncoder().encode(d.data);

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

type StoredDeadLetter = DeadLetter & { _id: unknown };

/**
 * What a dead letter written before messages were signed has instead of a signature. Replaying
 * it is the operator's decision (the letter is in the service's own database, written by its
 * consumer); it is read as it was then. Every letter written since has its signature, or null.
 */
export const WRITTEN_BEFORE_SIGNING = 'written before signing';
export type ReplayedSignature = MessageSignature | null | typeof WRITTEN_BEFORE_SIGNING;

const summary = (d: StoredDeadLetter): DeadLetterSummary => ({
  id: String(d._id),
  consumer: d.consumer,
  subject: d.subject,
  streamSequence: d.streamSequence,
  deliveryCount: d.deliveryCount,
  reason: d.reason,
  failedAt: new Date(d.failedAt).toISOString(),
});

const LIST_MAX = 1000;
const REPLAY_MAX = 1000;

export interface DeadLetterServiceOptions {
  nc: NatsConnection;
  names: NatsNames;
  /** The service whose dead letters these are (its name in the subject). */
  service: string;
  conn: Connection;
  /**
   * Hands one dead letter's message to the service's handler again, as it was delivered (its
   * subject and its sender's signature, which the handler checks again); throws if it still fails.
   * `signature` is `WRITTEN_BEFORE_SIGNING` for a letter from a release that did not sign.
   */
  replay: (data: Uint8Array, subject: string, signature: ReplayedSignature) => Promise<void>;
  /** Checks that requests come from deskctl or the settings console (identity). */
  verifier: MessageVerifier;
  logger: Logger;
}

/**
 * Answers operators (`deskctl dead-letters list|show|replay`, signed by identity) about this
 * service's dead letters, over NATS (`names.deadLetters(service)`, one replica answers each request). A replayed message
 * that its handler now takes is removed from the dead letters; one that fails again stays, with
 * the new reason. Replays run one at a time, at most 1000 per request.
 */
export function serveDeadLetters(o: DeadLetterServiceOptions): { stop(): void } {
  const { model } = deadLetterStore(o.conn);
  const log = o.logger.child({ component: 'dead-letters' });
  const handlers = {
    async list(limit = 100, skip = 0): Promise<DeadLetterReplies['list']> {
      const docs = await model
        .find()
        .sort({ failedAt: -1, _id: -1 })
        .skip(Math.max(0, skip))
        .limit(Math.max(1, Math.min(limit, LIST_MAX)))
        .lean<StoredDeadLetter[]>();
      return { total: await model.countDocuments(), deadLetters: docs.map(summary) };
    },
    async show(id: string): Promise<DeadLetterReplies['show']> {
      const doc = /^[0-9a-f]{24}$/.test(id) ? await model.findById(id).lean<StoredDeadLetter>() : null;
      return doc ? { found: true, deadLetter: { ...summary(doc), data: doc.data } } : { found: false };
    },
    async replay(ids: string[] | undefined, all: boolean): Promise<DeadLetterReplies['replay']> {
      const filter = all ? {} : { _id: { $in: (ids ?? []).filter((id) => /^[0-9a-f]{24}$/.test(id)) } };
      const docs = await model
        .find(filter)
        .sort({ failedAt: 1 })
        .limit(REPLAY_MAX)
        .lean<StoredDeadLetter[]>();
      const out: DeadLetterReplies['replay'] = { replayed: [], failed: [] };
      for (const doc of docs) {
        const id = String(doc._id);
        try {
          const signature = doc.signature === undefined ? WRITTEN_BEFORE_SIGNING : doc.signature;
          await o.replay(messageBytes(doc), doc.subject, signature);
          await model.deleteOne({ _id: doc._id });
          out.replayed.push(id);
        } catch (err) {
          const reason = `replay failed: ${(err as Error).message}`.slice(0, 1000);
          await model.updateOne({ _id: doc._id }, { $set: { reason, failedAt: new Date() } });
          out.failed.push({ id, reason });
        }
      }
      log.info({ replayed: out.replayed.length, failed: out.failed.length }, 'dead letters replayed');
      return out;
    },
  };
  const sub = serveRpc<Partial<DeadLetterRequest> & Record<string, unknown>, unknown>(
    o.nc,
    o.names.deadLetters(o.service),
    async (request) => {
      switch (request.op) {
        case 'list':
          return handlers.list(
            typeof request.limit === 'number' ? request.limit : undefined,
            typeof request.skip === 'number' && Number.isInteger(request.skip) ? request.skip : 0,
          );
        case 'show':
          return handlers.show(typeof request.id === 'string' ? request.id : '');
        case 'replay':
          return handlers.replay(
            Array.isArray(request.ids) ? request.ids.filter((i): i is string => typeof i === 'string') : [],
            request.all === true,
          );
        default:
          throw new Error(`unknown dead-letter operation ${String(request.op)}`);
      }
    },
    { verifier: o.verifier, callers: OPERATOR_CALLERS, logger: o.logger },
  );
  return { stop: () => sub.unsubscribe() };
}
