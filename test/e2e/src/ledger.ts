import type { EventType } from '@support-desk/contracts';
import type { Asserts } from './expect.js';
import type { Api } from './http.js';
import { eventually } from './stack.js';

/**
 * Audit completeness: every write the suite makes is recorded here with the event(s) it must
 * produce; `verify` then checks the audit store holds exactly that many events of each type for
 * each resource (no loss, no duplicates).
 */
export class Ledger {
  private readonly expected = new Map<string, Map<EventType, number>>();

  record(resourceId: string, ...types: EventType[]): void {
    let byType = this.expected.get(resourceId);
    if (!byType) {
      byType = new Map();
      this.expected.set(resourceId, byType);
    }
    for (const type of types) byType.set(type, (byType.get(type) ?? 0) + 1);
  }

  get size(): number {
    let n = 0;
    for (const m of this.expected.values()) for (const c of m.values()) n += c;
    return n;
  }

  /** For each recorded resource: the audit store's counts by type equal the recorded counts (types not recorded: 0). */
  async verify(t: Asserts, admin: Api, { timeoutMs = 20_000 } = {}): Promise<void> {
    for (const [resourceId, wanted] of this.expected) {
      const want = Object.fromEntries([...wanted.entries()].sort());
      let found: Record<string, number> = {};
      try {
        await eventually(
          async () => {
            found = await countByType(admin, resourceId);
            return JSON.stringify(found) === JSON.stringify(want);
          },
          { timeoutMs, intervalMs: 250, what: `events of ${resourceId}` },
        );
      } catch {
        // reported below with the counts
      }
      t.same(found, want, `audit completeness: ${resourceId} has exactly ${JSON.stringify(want)}`);
    }
  }
}

/** Every event of one resource, counted by type (all pages). */
export async function countByType(admin: Api, resourceId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let page = 1; page <= 50; page++) {
    const res = await admin.get(
      `/v1/events?resourceId=${encodeURIComponent(resourceId)}&limit=100&page=${page}`,
    );
    if (res.status !== 200)
      throw new Error(`GET /v1/events?resourceId=${resourceId}: ${res.status} ${res.text.slice(0, 200)}`);
    for (const e of res.json.data.events) counts[e.type] = (counts[e.type] ?? 0) + 1;
    if (!res.json.data.pagination?.hasMore) break;
  }
  return Object.fromEntries(Object.entries(counts).sort());
}
