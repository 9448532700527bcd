// @support-desk/platform/store: what repositories (a service's store/) build with: aggregates
// with their outbox, keyset queries, due-hour purges, fresh reads. Only store/ imports it
// (eslint.config.js); connecting to the store is wiring (@support-desk/platform/service).
export * from '../aggregate-insert.js';
export * from '../aggregate-update.js';
export * from '../bulk-updates.js';
export * from '../counted-walk.js';
export * from '../derived-fields.js';
export * from '../due-hours.js';
export * from '../fresh-reads.js';
export * from '../hour-walk.js';
export * from '../initial-walk.js';
export * from '../list-totals.js';
export * from '../search-keys.js';
export * from '../walk-bounds.js';
export * from '../walk-by-value.js';
export * from '../keyset.js';
export { escapeRegex } from '../mongo.js';
export { outboxPlugin, OUTBOX_MINUTE_FIELD, plainEntry, pushOutbox } from '../outbox.js';
export { isTimeLimitError } from '../store-deadline.js';
