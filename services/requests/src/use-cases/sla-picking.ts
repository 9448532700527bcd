import type { BusinessCalendar, Priority, RequestStatus, SlaPolicyMatch } from '@support-desk/contracts';
import type { SlaPolicyRecord } from '../store/sla-policies.js';
import { AROUND_THE_CLOCK_UTC } from './business-time.js';
import type { SlaSettings, SlaTier } from './sla-fallback.js';

/** A policy as a request takes it: what it keeps of the policy picked for it. */
export interface PickedPolicy {
  id: string | null;
  name: string;
  calendar: BusinessCalendar;
  pauseStatuses: RequestStatus[];
  responseGoalMs: number;
  resolutionGoalMs: number;
}

/** What the picking rule reads of a stored policy. */
export type PickablePolicy = Pick<
  SlaPolicyRecord,
  '_id' | 'name' | 'match' | 'targets' | 'calendar' | 'pauseStatuses'
>;

/** The facts a policy's match is checked on. */
export interface PolicyFacts {
  priority: Priority;
  groupId: string | null;
  vip: boolean;
}

/** Whether `match` holds for `facts`: every condition it gives (none: every request). */
function policyMatches(match: SlaPolicyMatch, facts: PolicyFacts): boolean {
  if (match.priorities && !match.priorities.includes(facts.priority)) return false;
  if (match.groups && !(facts.groupId && match.groups.includes(facts.groupId))) return false;
  if (match.vip !== undefined && match.vip !== facts.vip) return false;
  return true;
}

/**
 * The picking rule: the first of `policies` (in the order they are tried) whose match holds, else
 * the SLA_POLICY table around the clock in UTC (the VIP row for a VIP requester).
 */
export function pickPolicy(
  settings: SlaSettings,
  policies: PickablePolicy[],
  facts: PolicyFacts,
): PickedPolicy {
  const policy = policies.find((p) => policyMatches(p.match, facts));
  if (policy) {
    const row = policy.targets[facts.priority];
    return {
      id: policy._id,
      name: policy.name,
      calendar: policy.calendar,
      pauseStatuses: policy.pauseStatuses,
      responseGoalMs: row.firstResponseMinutes * 60_000,
      resolutionGoalMs: row.resolutionMinutes * 60_000,
    };
  }
  const tier: SlaTier = facts.vip ? 'vip' : 'standard';
  const row = settings.policy[tier][facts.priority];
  return {
    id: null,
    name: tier,
    calendar: AROUND_THE_CLOCK_UTC,
    pauseStatuses: [],
    responseGoalMs: row.responseMinutes * 60_000,
    resolutionGoalMs: row.resolutionMinutes * 60_000,
  };
}
