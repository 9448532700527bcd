import type { Connection } from 'mongoose';
import { CALL_TIMEOUT_HEADER } from '../call-deadline.js';

/** An answer as `app.inject` gives it (the parts the overload checks read). */
export interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * Sends `count` copies of one expensive call at once (a service configured with a limit of one
 * for its class) beside one cheap call, and sorts the answers. The first admitted call holds its
 * slot while it waits on the store, so the ones behind it are refused; none may be anything but
 * an answer or a refusal.
 */
export async function burstPastLimit(
  expensive: () => Promise<Answer>,
  cheap: () => Promise<Answer>,
  count = 8,
) {
  const answers = await Promise.all([cheap(), ...Array.from({ length: count }, expensive)]);
  const [cheapAnswer, ...burst] = answers;
  const refused = burst.filter((a) => a.statusCode === 503);
  return {
    cheap: cheapAnswer!,
    admitted: burst.filter((a) => a.statusCode >= 200 && a.statusCode < 300).length,
    refused,
    /** Answers that were neither (must be none). */
    other: burst.filter((a) => a.statusCode !== 503 && (a.statusCode < 200 || a.statusCode >= 300)),
    /** The first refusal's envelope and Retry-After. */
    refusal: refused[0]
      ? {
          retryAfter: refused[0].headers['retry-after'],
          body: JSON.parse(refused[0].body) as { success: boolean; error: { code: string; message: string } },
        }
      : null,
  };
}

/**
 * The `maxTimeMS` of every store command on `collection` sent while `operation` ran, through a
 * connection from `testCountedMongo` (command monitoring on).
 */
export async function storeTimeLimits(
  conn: Connection,
  collection: string,
  operation: () => Promise<unknown>,
): Promise<(number | undefined)[]> {
  const limits: (number | undefined)[] = [];
  const watch = (e: { commandName: string; command: Record<string, unknown> }) => {
    if (['find', 'count', 'aggregate'].includes(e.commandName) && e.command[e.commandName] === collection)
      limits.push(e.command.maxTimeMS as number | undefined);
  };
  conn.getClient().on('commandStarted', watch);
  try {
    await operation();
  } finally {
    conn.getClient().off('commandStarted', watch);
  }
  return limits;
}

/** The header the gateway sends with the budget it gives a call (ms). */
export const budgetHeader = (ms: number) => ({ [CALL_TIMEOUT_HEADER]: String(ms) });

/** The assertions of a tap `Test` that the checks below make. */
interface Checks {
  ok(value: unknown, message: string): unknown;
  equal(found: unknown, wanted: unknown, message: string): unknown;
  same(found: unknown, wanted: unknown, message: string): unknown;
  match(found: unknown, wanted: unknown, message: string): unknown;
}

/**
 * What every service's admission must show for a burst (`burstPastLimit`): the cheap call
 * answered, some of the burst admitted and the rest refused with 503 SERVICE_UNAVAILABLE,
 * `Retry-After: 1` and a message naming the class (`message`), nothing else.
 */
export function checkBurst(t: Checks, burst: Awaited<ReturnType<typeof burstPastLimit>>, message: RegExp) {
  t.equal(burst.cheap.statusCode, 200, 'the cheap call is not held back');
  t.ok(burst.refused.length > 0, `calls past the limit are refused (${burst.refused.length})`);
  t.ok(burst.admitted > 0, 'the admitted call is answered');
  t.same(burst.other, [], 'nothing but answers and refusals');
  t.equal(burst.refusal?.retryAfter, '1', 'a refusal says when to retry');
  t.match(
    burst.refusal?.body,
    { success: false, error: { code: 'SERVICE_UNAVAILABLE', message } },
    `a 503 in the envelope naming the class (${message})`,
  );
}

/** Every store read of a call carried a `maxTimeMS` within the budget the gateway gave it. */
export function checkStoreDeadlines(t: Checks, limits: (number | undefined)[], budgetMs: number) {
  t.ok(limits.length > 0, 'the call asked the store');
  t.ok(
    limits.every((ms) => ms !== undefined && ms > 0 && ms <= budgetMs),
    `every read carries maxTimeMS within the budget (${limits.join(', ')})`,
  );
}

/**
 * Calls a list with the budget the gateway would give it (`budgetMs`) and checks that every store
 * read it made on `collection` carried a `maxTimeMS` within that budget.
 */
export async function checkListDeadline(
  t: Checks,
  conn: Connection,
  collection: string,
  list: (headers: Record<string, string>) => Promise<unknown>,
  budgetMs = 3000,
) {
  checkStoreDeadlines(
    t,
    await storeTimeLimits(conn, collection, () => list(budgetHeader(budgetMs))),
    budgetMs,
  );
}
