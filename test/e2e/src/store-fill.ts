import { newId, PRIORITIES, REQUEST_STATUSES, timeOfId } from '@support-desk/contracts';
import { connectMongo } from '@support-desk/platform/service';
import { dayKey, hourKey, monthKey } from '@support-desk/platform/core';
import { initialRank, searchKeysOf, walkBounds } from '@support-desk/platform/store';
import type { Stack } from './stack.js';

const FILL_BATCH = 5000;

/**
 * Documents straight into a service's store, in bulk (issue 31's test and the lists bench need
 * thousands; one API call each would take minutes): `count` copies of the document `templateId`
 * of `collection` (made through the API, so every field the service reads is there), each
 * changed by `vary(n)`; its pending outbox is left out. Returns the copies' ids.
 */
export async function storeCopies(
  stack: Stack,
  service: 'requests' | 'identity' | 'audit' | 'webhooks',
  collection: string,
  templateId: string,
  count: number,
  vary: (n: number) => Record<string, unknown> & { _id: string },
): Promise<string[]> {
  const conn = await connectMongo({ url: stack.env.MONGO_URL, dbName: `${stack.run}_${service}` });
  try {
    const docs = conn.db!.collection(collection);
    const spans = walkBounds(conn);
    const template = await docs.findOne({ _id: templateId as never });
    if (!template) throw new Error(`${collection} ${templateId} is not in the store`);
    const { outbox: _outbox, ...fields } = template as Record<string, unknown>;
    const ids: string[] = [];
    // Unordered batches of 5,000: the store takes them as a few multi-row inserts, 50,000 in seconds.
    for (let start = 0; start < count; start += FILL_BATCH) {
      const batch = Array.from({ length: Math.min(FILL_BATCH, count - start) }, (_, k) => {
        const copy = { ...fields, ...vary(start + k) };
        ids.push(copy._id);
        return copy;
      });
      await docs.insertMany(batch as never[], { ordered: false });
      // The lists' spans widened to the batch, as the services' inserts do (the users' counted per day).
      const counted = collection === 'users';
      const timesOf = (field: string) =>
        batch.map((d) => ((d as Record<string, unknown>)[field] as Date).getTime());
      if (collection === 'requests' || counted) {
        await spans.stored(collection, timesOf('createdAt'), counted);
        await spans.stored(`${collection}.updated`, timesOf('updatedAt'), counted);
      }
      if (collection === 'events') await spans.stored('events', timesOf('timestamp'));
      if (collection === 'deliveries')
        await spans.stored(
          String(fields.subscriptionId),
          batch.map((d) => timeOfId(d._id)!),
        );
    }
    return ids;
  } finally {
    await conn.close();
  }
}

/** What changes in the `n`th stored event (at `at`): its type, time and the hours the lists walk. */
export function storedEvent(type: string, at: Date) {
  return { _id: newId('event'), type, timestamp: at, hour: hourKey(at), day: dayKey(at) };
}

/** What changes in the `n`th stored request (created at `at`): statuses and priorities in turn. */
export function storedRequest(n: number, at: Date) {
  const priority = PRIORITIES[n % PRIORITIES.length]!;
  return {
    _id: newId('request'),
    title: `Stored request ${n}`,
    status: REQUEST_STATUSES[Math.floor(n / PRIORITIES.length) % REQUEST_STATUSES.length],
    priority,
    priorityRank: PRIORITIES.length - PRIORITIES.indexOf(priority),
    createdAt: at,
    updatedAt: at,
    // The hours and days the lists walk (the repository's derived keys).
    createdHour: hourKey(at),
    createdDay: dayKey(at),
    updatedHour: hourKey(at),
    updatedDay: dayKey(at),
    rev: 0,
  };
}

/**
 * What changes in a stored delivery made at `at`: its id (which holds the time the log sorts and
 * walks by), its hour and day keys, and a finished state the worker never looks at again.
 */
export function storedDelivery(n: number, at: Date) {
  const _id = newId('delivery', at.getTime());
  return {
    _id,
    eventType: n % 2 ? 'request.created' : 'request.updated',
    status: n % 5 === 0 ? 'failed' : 'succeeded',
    nextAttemptAt: null,
    dueMinute: null,
    expiresAt: null,
    expiresHour: null,
    createdAt: at,
    idHour: hourKey(at),
    idDay: dayKey(at),
  };
}

/**
 * The `n`th stored user (created at `at`): an agent, viewer or admin in turn, with the keys the
 * identity service's lists read it by (its user-keys.ts: the hours, days and months, the initials
 * of the name and email, the search keys).
 */
export function storedUser(n: number, at: Date, run: string) {
  const email = `stored-${n}.${run}@example.com`;
  const name = `${String.fromCharCode(65 + (n % 26))}. Stored ${n}`;
  return {
    _id: newId('user'),
    email,
    emailKey: email,
    name,
    role: (['agent', 'viewer', 'admin'] as const)[n % 3],
    createdAt: at,
    updatedAt: at,
    createdHour: hourKey(at),
    createdDay: dayKey(at),
    createdMonth: monthKey(at),
    updatedHour: hourKey(at),
    updatedDay: dayKey(at),
    updatedMonth: monthKey(at),
    nameRank: initialRank(name),
    emailRank: initialRank(email),
    searchKeys: searchKeysOf(name, email),
  };
}
