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
  private readonly expected = new Map<string, Map<string, number>>();
  private readonly optional = new Map<string, Map<string, number>>();

  private static bump(map: Map<string, Map<string, number>>, id: string, type: string) {
    let byType = map.get(id);
    if (!byType) {
      byType = new Map();
      map.set(id, byType);
    }
    byType.set(type, (byType.get(type) ?? 0) + 1);
  }

  /** The write must produce exactly one event of each of these types for `resourceId`. */
  record(resourceId: string, ...types: EventType[]): void {
    for (const type of types) Ledger.bump(this.expected, resourceId, type);
  }

  /**
   * A side effect the spec leaves open (e.g. status `assigned` on a first assignment): at most one
   * such event per write, never a duplicate.
   */
  allow(resourceId: string, type: EventType): void {
    Ledger.bump(this.optional, resourceId, type);
    if (!this.expected.has(resourceId)) this.expected.set(resourceId, new Map());
  }

  /** A resource that must have no events at all (e.g. the target of refused writes). */
  none(resourceId: string): void {
    if (!this.expected.has(resourceId)) this.expected.set(resourceId, new Map());
  }

  get size(): number {
    let n = 0;
    for (const m of this.expected.values()) for (const c of m.values()) n += c;
    return n;
  }

  get resources(): string[] {
    return [...this.expected.keys()];
  }

  private matches(id: string, found: Record<string, number>): boolean {
    const want = this.expected.get(id) ?? new Map();
    const may = this.optional.get(id) ?? new Map();
    const types = new Set([...want.keys(), ...may.keys(), ...Object.keys(found)]);
    for (const type of types) {
      const min = want.get(type) ?? 0;
      const max = min + (may.get(type) ?? 0);
      const n = found[type] ?? 0;
      if (n < min || n > max) return false;
    }
    return true;
  }

  /**
   * For each recorded resource, the audit store holds exactly the recorded events by type (plus at
   * most the allowed side effects) — nothing lost, nothing doubled, nothing unexpected.
   */
  async verify(t: Asserts, admin: Api, { timeoutMs = 20_000 } = {}): Promise<void> {
    for (const id of this.expected.keys()) {
      const want = Object.fromEntries([...(this.expected.get(id) ?? new Map()).entries()].sort());
      const may = Object.fromEntries([...(this.optional.get(id) ?? new Map()).entries()].sort());
      let found: Record<string, number> = {};
      let ok = false;
      try {
        ok = await eventually(
          async () => {
            found = await countByType(admin, id);
            return this.matches(id, found);
          },
          { timeoutMs, intervalMs: 250, what: `events of ${id}` },
        );
      } catch {
        ok = false;
      }
      t.ok(
        ok,
        `audit completeness: ${id} has ${JSON.stringify(want)}${Object.keys(may).length ? ` (+ at most ${JSON.stringify(may)})` : ''}`,
        {
          found,
        },
      );
    }
  }
}

/** Every event of one resource, counted by type (all pages). */
async function countByType(admin: Api, resourceId: string): Promise<Record<string, number>> {
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
