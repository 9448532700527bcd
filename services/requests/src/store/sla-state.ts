import type { SlaStatus } from '@support-desk/contracts';

/** What the requests document stores about its SLA. */
export interface SlaState {
  tier: string;
  vip: boolean;
  responseTarget: Date;
  responseWarnAt: Date;
  resolutionTarget: Date;
  resolutionWarnAt: Date;
  responseStatus: SlaStatus;
  resolutionStatus: SlaStatus;
  /** Set once by whoever emitted the event (the monitor): the exactly-once markers. */
  responseWarnedAt: Date | null;
  responseBreachedAt: Date | null;
  resolutionWarnedAt: Date | null;
  resolutionBreachedAt: Date | null;
  /** Total time spent resolved/closed before a reopen; shifts the resolution target. */
  pausedMs: number;
}
