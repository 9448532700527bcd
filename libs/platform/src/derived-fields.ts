import { isDeepStrictEqual } from 'node:util';
import type { FilterQuery, Model } from 'mongoose';
import { updateAggregate } from './aggregate-update.js';

/**
 * Gives documents stored before a derived field existed (a list's key, a rank) their fields, at
 * most `limit` a call: the ids matching `incomplete` read first, then each document a revisioned
 * write of the fields `derive` gives it (so it can neither lose nor erase a concurrent change),
 * only where they differ; `updatedAt` stays (nothing changed for the document's readers). How
 * many were read (fewer than `limit`: none left).
 */
export async function completeDerivedFields<T extends { _id: string; rev?: number }>(
  model: Model<T>,
  incomplete: FilterQuery<T>,
  limit: number,
  derive: (doc: T) => Record<string, unknown>,
  what: string,
): Promise<number> {
  const found = await model.find(incomplete, { _id: 1 }).limit(limit).lean<{ _id: string }[]>().exec();
  for (const { _id } of found) {
    await updateAggregate<T, void>(
      model,
      _id,
      (current) => {
        const fields = derive(current);
        const stale = Object.entries(fields).some(([k, v]) => !isDeepStrictEqual(current[k as keyof T], v));
        return { write: stale ? { set: fields } : null, result: undefined };
      },
      { what },
    );
  }
  return found.length;
}
