import { NOTICE_VERSION } from '@support-desk/contracts';
import { buildEvent, type EventContext, eventEntry, messageEntry } from '@support-desk/platform/core';
import type { Deps } from './deps.js';

/** Resource id of the global allowlist in `system.config_changed` events. */
const ALLOWLIST_RESOURCE = 'settings.ip_allowlist';

export async function getSettings(deps: Deps): Promise<{ globalAllowlist: string[] }> {
  const doc = await deps.settings.get();
  return { globalAllowlist: doc?.globalAllowlist ?? [] };
}

/** Replaces the global API-key allowlist (empty = no restriction). */
export async function setGlobalAllowlist(deps: Deps, ctx: EventContext, allowlist: string[]) {
  return deps.settings.update((before) => {
    const previous = before.globalAllowlist ?? [];
    if (JSON.stringify(previous) === JSON.stringify(allowlist)) {
      return { write: null, result: { globalAllowlist: allowlist } };
    }
    const now = deps.clock();
    const event = buildEvent(
      'system.config_changed',
      ALLOWLIST_RESOURCE,
      ctx,
      { ipAllowlist: { from: previous, to: allowlist } },
      now,
    );
    const notice = { v: NOTICE_VERSION, kind: 'settings_changed', at: now.toISOString() };
    return {
      write: {
        set: { globalAllowlist: allowlist, updatedAt: now },
        outbox: [eventEntry(deps.names, event), messageEntry(deps.names.credentialNotices, notice)],
      },
      result: { globalAllowlist: allowlist },
    };
  }, deps.clock());
}
