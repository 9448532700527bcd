import type { BusinessCalendar, RequestStatus, SlaStatus } from '@support-desk/contracts';

/** What the requests document stores about its SLA. */
export interface SlaState {
  tier: string;
  vip: boolean;
  /** The policy picked (null: the SLA_POLICY fallback) and what the request keeps of it. */
  policyId: string | null;
  calendar: BusinessCalendar;
  pauseStatuses: RequestStatus[];
  /** The targets of the row applied, in business ms. */
  responseGoalMs: number;
  resolutionGoalMs: number;
  /** Business ms each clock had run up to `countedAt` (the last write that changed the SLA). */
  responseUsedMs: number;
  resolutionUsedMs: number;
  countedAt: Date;
  /** Since when the request stands in one of its pause statuses; null while not paused. */
  pausedSince: Date | null;
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
  /** Before SLA policies: wall time spent resolved/closed before a reopen (read by the upgrade). */
  pausedMs?: number;
}
