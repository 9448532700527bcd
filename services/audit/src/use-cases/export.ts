import type { EventExportEnd, EventsExportQuery } from '@support-desk/contracts';
import { type CursorScope, decodeCursor, encodeCursor, validationError } from '@support-desk/platform/core';
import type { StoredEvent } from '../store/event-model.js';
import type { EventFilter, EventQueries } from '../store/event-queries.js';
import { positionOf, toFilter, toListItem } from './events.js';

/** Text handed to the transport at once: lines are gathered up to this size (or a batch's end). */
const CHUNK_BYTES = 64 * 1024;

/**
 * What an export cursor is valid for: the oldest-first order of the selecting filters. The time
 * window (`since`/`until`) is left out on purpose: it bounds the order's own key, so an export can
 * go on in slices (`until` moved on) from where the last one stopped.
 */
function exportScope(filter: EventFilter): CursorScope {
  const { since: _since, until: _until, ...selecting } = filter;
  return { sort: 'timestamp', kinds: ['date'], filters: selecting };
}

export interface ExportSettings {
  /** Events per store batch: what one export holds in memory at once (with one chunk of text). */
  batchSize: number;
}

/**
 * `GET /v1/events/export` without HTTP: the filtered log, oldest first, as NDJSON text chunks.
 * Everything that can fail on the input or the store's first answer fails here, before a byte is
 * produced (so the caller can still answer with the error envelope); after that, the chunks are
 * produced only as fast as they are consumed (the store cursor is read batch by batch on demand,
 * closed when the consumer stops). Each event line carries its `cursor`; the last line is the end
 * line, whose absence tells a client the stream was cut.
 */
export function eventExporter(store: EventQueries, settings: ExportSettings) {
  return async function openExport(query: EventsExportQuery): Promise<AsyncIterable<string>> {
    const filter = toFilter(query);
    const scope = exportScope(filter);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope);
    if (after?.direction === 'prev') {
      throw validationError(
        'query.cursor',
        'is a list cursor reading backwards; an export only goes forwards',
      );
    }
    const limit = query.limit ?? Number.POSITIVE_INFINITY;
    const seek = after && { values: [...after.keys, after.id], direction: 'next' as const };
    const cursor = store.stream(filter, seek, settings.batchSize);
    const events = cursor[Symbol.asyncIterator]() as AsyncIterator<StoredEvent>;
    let first: IteratorResult<StoredEvent>;
    try {
      first = await events.next();
    } catch (err) {
      await cursor.close().catch(() => undefined);
      throw err;
    }
    const cursorOf = (e: StoredEvent) => encodeCursor(scope, { ...positionOf(e), direction: 'next' });

    async function* lines(): AsyncGenerator<string> {
      let next = first;
      let count = 0;
      let lastCursor = query.cursor ?? null;
      let text = '';
      try {
        while (!next.done && count < limit) {
          lastCursor = cursorOf(next.value);
          text += `${JSON.stringify({ ...toListItem(next.value), cursor: lastCursor })}\n`;
          count++;
          if (text.length >= CHUNK_BYTES) {
            yield text;
            text = '';
          }
          // At the limit, one more read says whether the export was cut short.
          next = await events.next();
        }
        const end: EventExportEnd = { type: 'end', count, nextCursor: lastCursor, hasMore: !next.done };
        yield `${text}${JSON.stringify(end)}\n`;
      } finally {
        // Done, cut by the consumer, or failed: the store cursor is released either way.
        await cursor.close().catch(() => undefined);
      }
    }
    return lines();
  };
}

export type EventExporter = ReturnType<typeof eventExporter>;
