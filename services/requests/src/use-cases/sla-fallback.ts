import { PRIORITIES, type Priority } from '@support-desk/contracts';
import { ConfigError } from '@support-desk/platform/core';

/** The SLA_POLICY table: what applies when no SLA policy matches (use-cases/sla-picking.ts). */
interface SlaRow {
  /** Minutes from creation to the first response. */
  responseMinutes: number;
  /** Minutes from creation to resolution (time spent resolved/closed is not counted). */
  resolutionMinutes: number;
}
export type SlaTier = 'standard' | 'vip';
export type SlaPolicy = Record<SlaTier, Record<Priority, SlaRow>>;

const h = (hours: number) => hours * 60;

export const DEFAULT_SLA_POLICY: SlaPolicy = {
  standard: {
    critical: { responseMinutes: h(1), resolutionMinutes: h(4) },
    high: { responseMinutes: h(4), resolutionMinutes: h(24) },
    medium: { responseMinutes: h(8), resolutionMinutes: h(72) },
    low: { responseMinutes: h(24), resolutionMinutes: h(120) },
  },
  vip: {
    critical: { responseMinutes: 30, resolutionMinutes: h(2) },
    high: { responseMinutes: h(2), resolutionMinutes: h(12) },
    medium: { responseMinutes: h(4), resolutionMinutes: h(36) },
    low: { responseMinutes: h(12), resolutionMinutes: h(60) },
  },
};

/** The default table with the rows of `json` (SLA_POLICY) laid over it; fails naming the bad cell. */
export function parseSlaPolicy(json: string | undefined): SlaPolicy {
  const policy: SlaPolicy = structuredClone(DEFAULT_SLA_POLICY);
  if (!json) return policy;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new ConfigError('Invalid configuration: SLA_POLICY is not valid JSON');
  }
  if (!raw || typeof raw !== 'object')
    throw new ConfigError('Invalid configuration: SLA_POLICY must be an object');
  for (const [tier, rows] of Object.entries(raw as Record<string, unknown>)) {
    if (tier !== 'standard' && tier !== 'vip') {
      throw new ConfigError(`Invalid configuration: SLA_POLICY.${tier} is not a tier (standard, vip)`);
    }
    for (const [priority, row] of Object.entries((rows ?? {}) as Record<string, unknown>)) {
      if (!(PRIORITIES as readonly string[]).includes(priority)) {
        throw new ConfigError(`Invalid configuration: SLA_POLICY.${tier}.${priority} is not a priority`);
      }
      const r = row as Partial<SlaRow>;
      for (const key of ['responseMinutes', 'resolutionMinutes'] as const) {
        const v = r?.[key] ?? policy[tier][priority as Priority][key];
        if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
          throw new ConfigError(`Invalid configuration: SLA_POLICY.${tier}.${priority}.${key} must be > 0`);
        }
        policy[tier][priority as Priority][key] = v;
      }
    }
  }
  return policy;
}

export interface SlaSettings {
  policy: SlaPolicy;
  warningRatio: number;
}
