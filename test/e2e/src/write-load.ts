// Steady write load through a gateway, and the audit check of what it wrote: every acknowledged
// write's `request.created` event in audit exactly once (none lost, none duplicated). For tests
// that disturb the platform under the load (a rolling upgrade, a deleted or evicted pod).
import { request, type Json } from './http.js';

interface WriteLoadResult {
  /** Ids of the requests the gateway acknowledged (201). */
  acknowledged: string[];
  /** Every call that did not answer 201: what it answered, or its error. */
  failures: string[];
  calls: number;
  seconds: number;
}

/**
 * Starts `workers` loops, each POSTing one request at a time and pausing `pauseMs` between calls
 * (a steady load a client makes, not the most the machine can take: on a shared 2-core machine a
 * saturating load starves the other services' answers, which is not what a rollout test measures),
 * a connection per call, so every call goes through the Service afresh, until `stop()`; `stop()`
 * resolves with what they saw. Each loop is bounded by `maxCalls`.
 */
export function startWriteLoad(
  base: string,
  key: string,
  {
    workers = 2,
    pauseMs = 100,
    label,
    maxCalls = 5_000,
  }: { workers?: number; pauseMs?: number; label: string; maxCalls?: number },
) {
  const result: WriteLoadResult = { acknowledged: [], failures: [], calls: 0, seconds: 0 };
  const started = Date.now();
  let stopping = false;
  const headers = { Authorization: `Bearer ${key}`, Accept: 'application/json' };
  const loop = async (worker: number) => {
    for (let i = 0; !stopping && i < maxCalls; i++) {
      result.calls++;
      try {
        const res = await request(`${base}/v1/requests`, {
          method: 'POST',
          headers,
          json: { title: `${label} ${worker}-${i}`, description: 'written under load', priority: 'low' },
          timeoutMs: 15_000,
        });
        if (res.status === 201) result.acknowledged.push(String(res.json?.data?.id));
        else result.failures.push(`${res.status} ${res.text.slice(0, 200)}`);
      } catch (err) {
        result.failures.push(String(err));
      }
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, w) => loop(w)));
  return {
    result,
    async stop() {
      stopping = true;
      await running;
      result.seconds = (Date.now() - started) / 1000;
      return result;
    },
  };
}

/**
 * How many `request.created` events audit holds for each of `ids` (read through the gateway with
 * an admin key, events since `since`), once every id has at least one or `timeoutMs` passed.
 */
export async function auditCounts(
  base: string,
  adminKey: string,
  ids: string[],
  since: string,
  timeoutMs = 120_000,
) {
  const headers = { Authorization: `Bearer ${adminKey}`, Accept: 'application/json' };
  const deadline = Date.now() + timeoutMs;
  let counts = new Map<string, number>();
  for (let round = 0; round < 200 && Date.now() < deadline; round++) {
    counts = new Map(ids.map((id) => [id, 0]));
    let cursor: string | undefined;
    for (let page = 0; page < 500; page++) {
      const query = new URLSearchParams({ type: 'request.created', since, limit: '100' });
      if (cursor) query.set('cursor', cursor);
      const res = await request(`${base}/v1/events?${query}`, { headers });
      // A busy store may run out of the call's time: that page again (the round is bounded).
      if (res.status === 503) {
        page--;
        await new Promise((r) => setTimeout(r, 1000));
        if (Date.now() > deadline)
          throw new Error(`GET /v1/events answered 503 until the deadline: ${res.text}`);
        continue;
      }
      if (res.status !== 200) throw new Error(`GET /v1/events answered ${res.status}: ${res.text}`);
      for (const e of (res.json?.data?.events ?? []) as Json[]) {
        const id = String(e.resource?.id ?? e.resourceId ?? '');
        if (counts.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      cursor = res.json?.data?.pagination?.nextCursor ?? undefined;
      if (!res.json?.data?.pagination?.hasMore || !cursor) break;
    }
    if ([...counts.values()].every((n) => n > 0)) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return {
    missing: ids.filter((id) => counts.get(id) === 0),
    duplicated: ids.filter((id) => (counts.get(id) ?? 0) > 1),
  };
}
