/**
 * How the delivery worker's reads are gathered (`batchedCalls`): lanes drift a few milliseconds
 * apart as their reads answer, so a batch waits that long for the others before it goes (a lane's
 * attempt is tens of milliseconds or more; 5 ms of it buys one read for several lanes).
 */
export const WORKER_BATCHES = { lingerMs: 5 };
