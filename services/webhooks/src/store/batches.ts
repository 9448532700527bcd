/**
 * How the delivery worker's store calls are gathered (`batchedCalls`): lanes started together
 * drift a few milliseconds apart as their reads answer, so each batch waits that long for the
 * others before it goes (a lane's attempt is tens of milliseconds or more; 5 ms of it buys one
 * store call for the group instead of one per lane).
 */
export const WORKER_BATCHES = { lingerMs: 5 };
