import type { SyncRunSummary } from '../store/index.js';

/** A sync run as deskctl and the connection's view show it (dates as ISO strings). */
export interface SyncRunView extends Omit<SyncRunSummary, 'startedAt' | 'finishedAt'> {
  provider: string;
  startedAt: string;
  finishedAt: string;
}

export const syncRunView = (provider: string, s: SyncRunSummary): SyncRunView => ({
  provider,
  ...s,
  startedAt: new Date(s.startedAt).toISOString(),
  finishedAt: new Date(s.finishedAt).toISOString(),
});
