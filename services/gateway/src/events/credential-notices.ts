import { DeliverPolicy, type JsMsg, jetstream } from '@nats-io/jetstream';
import {
  type CredentialNotice,
  isNoticeKind,
  type NatsNames,
  NOTICE_PRODUCERS,
  NoticeEnvelope,
} from '@support-desk/contracts';
import {
  decodeJson,
  type MessageVerifier,
  type NatsConnection,
  sentByOneOf,
  signatureOf,
  UnauthenticatedMessageError,
} from '@support-desk/platform/messaging';
import type { Logger } from '@support-desk/platform/core';
import { Value } from 'typebox/value';

type NoticeHandler = (notice: CredentialNotice) => Promise<void> | void;

export interface NoticeSubscriberOptions {
  nc: NatsConnection;
  names: NatsNames;
  /** Only notices identity signed are applied. */
  verifier: MessageVerifier;
  logger: Logger;
  handle: NoticeHandler;
}

/** Throws unless a notice is one a gateway may apply: identity's, on the notices subject. */
function checkSender(verifier: MessageVerifier, expected: string, msg: JsMsg): void {
  if (msg.subject !== expected) throw new UnauthenticatedMessageError(`arrived on ${msg.subject}`);
  const sender = verifier.sender(msg.subject, msg.data, signatureOf(msg.headers));
  if (!sentByOneOf(sender, NOTICE_PRODUCERS))
    throw new UnauthenticatedMessageError(`${sender} may not send notices`);
}

/**
 * Every gateway replica reads every credential notice: an ordered (ephemeral, per-replica)
 * JetStream consumer starting at new messages. Nothing is acknowledged or shared, so each
 * replica drops its own caches; the ordered consumer recreates itself after a NATS outage. A
 * notice not signed by identity is ignored (and logged): a revocation can only come from identity.
 */
export async function subscribeCredentialNotices({
  nc,
  names,
  verifier,
  logger,
  handle,
}: NoticeSubscriberOptions) {
  const js = jetstream(nc);
  const consumer = await js.consumers.get(names.noticesStream, {
    // A single subject (not an array): nats-server 2.9 has no multi-filter consumers.
    filter_subjects: names.credentialNotices,
    deliver_policy: DeliverPolicy.New,
  });
  const messages = await consumer.consume();
  const done = (async () => {
    for await (const msg of messages) {
      try {
        checkSender(verifier, names.credentialNotices, msg);
      } catch (err) {
        if (!(err instanceof UnauthenticatedMessageError)) throw err;
        logger.warn({ seq: msg.seq, reason: err.message }, 'credential notice not from identity; ignored');
        continue;
      }
      let notice: unknown;
      try {
        notice = decodeJson(msg.data);
      } catch {
        logger.warn({ seq: msg.seq }, 'credential notice is not JSON; ignored');
        continue;
      }
      // A tolerant reader: the envelope is checked, unknown fields are ignored, and a kind this
      // release does not know has nothing here to drop.
      if (!Value.Check(NoticeEnvelope, notice)) {
        logger.warn({ seq: msg.seq }, 'credential notice has no valid envelope; ignored');
        continue;
      }
      if (!isNoticeKind(notice.kind)) {
        logger.info(
          { seq: msg.seq, kind: notice.kind },
          'credential notice of a kind this release does not know; ignored',
        );
        continue;
      }
      try {
        await handle(notice as CredentialNotice);
        logger.info(
          { kind: notice.kind, keyId: notice.keyId, userId: notice.userId },
          'credential notice applied',
        );
      } catch (err) {
        logger.error({ err, kind: notice.kind }, 'credential notice handling failed');
      }
    }
  })();
  return {
    async stop() {
      await messages.close();
      await done.catch(() => undefined);
    },
  };
}
