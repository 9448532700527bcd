import { buildEvent, type EventContext, eventEntry, messageEntry, pushOutbox } from '@support-desk/platform';
import { SETTINGS_ID, type SettingsDoc } from '../store/index.js';
import type { Deps } from './context.js';

/** Resource id of the global allowlist in `system.config_changed` events. */
export const ALLOWLIST_RESOURCE = 'settings.ip_allowlist';

export async function getSettings(deps: Deps): Promise<{ globalAllowlist: string[] }> {
  const doc = await deps.store.settings.findById(SETTINGS_ID).lean<SettingsDoc>();
  return { globalAllowlist: doc?.globalAllowlist ?? [] };
}

/** Replaces the global API-key allowlist (empty = no restriction). */
export async function setGlobalAllowlist(deps: Deps, ctx: EventContext, allowlist: string[]) {
  const before = await getSettings(deps);
  if (JSON.stringify(before.globalAllowlist) === JSON.stringify(allowlist))
    return { globalAllowlist: allowlist };
  const now = deps.clock();
  const event = buildEvent(
    'system.config_changed',
    ALLOWLIST_RESOURCE,
    ctx,
    { ipAllowlist: { from: before.globalAllowlist, to: allowlist } },
    now,
  );
  const notice = { kind: 'settings_changed', at: now.toISOString() };
  await deps.store.settings.updateOne(
    { _id: SETTINGS_ID },
    {
      $set: { globalAllowlist: allowlist, updatedAt: now },
      $push: pushOutbox([eventEntry(deps.names, event), messageEntry(deps.names.credentialNotices, notice)]),
    },
    { upsert: true },
  );
  deps.kick();
  return { globalAllowlist: allowlist };
}
