import { TtlCache } from '@support-desk/platform/core';
import type { SubscriptionDoc } from '../store/subscriptions.js';

/**
 * The subscriptions the delivery worker sends for, kept between attempts and lanes: a burst to one
 * subscription reads it once, not once an attempt. A copy goes when the subscription is written
 * (`forget`: by this replica's API and worker at once, by another replica's on its change notice,
 * the `system.config_changed` event every write publishes), and after `ttlMs` at the latest (a
 * notice missed while NATS was away; a failure count another replica kept, which changes no
 * notice). A read that started before a `forget` is not kept (it may predate the write).
 */
export function createSubscriptionCache(
  load: (id: string) => Promise<SubscriptionDoc | null>,
  ttlMs: number,
) {
  const cache = new TtlCache<string, SubscriptionDoc | null>(1000);
  const loading = new Map<string, Promise<SubscriptionDoc | null>>();
  /** Bumped by every `forget`: a read that started under an older generation is used, not kept. */
  let generation = 0;
  return {
    /** The live subscription (null: deleted or unknown). */
    async get(id: string): Promise<SubscriptionDoc | null> {
      const cached = cache.get(id);
      if (cached !== undefined) return cached;
      const running = loading.get(id);
      if (running) return running;
      const started = generation;
      const read = load(id)
        .then((doc) => {
          if (generation === started) cache.set(id, doc, ttlMs);
          return doc;
        })
        .finally(() => {
          if (loading.get(id) === read) loading.delete(id);
        });
      loading.set(id, read);
      return read;
    },
    /** The subscription was written: the next attempt reads it again (all of them: no id given). */
    forget(id?: string): void {
      generation++;
      if (id === undefined) cache.clear();
      else cache.delete(id);
      // A read under way may predate the write: the next caller starts its own.
      if (id === undefined) loading.clear();
      else loading.delete(id);
    },
  };
}
