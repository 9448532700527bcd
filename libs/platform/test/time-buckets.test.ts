import t from 'tap';
import { MINUTE_MS, minuteKey, minuteStart, TimeBucketCursor } from '../src/subpaths/core.js';

const at = (iso: string) => new Date(iso).getTime();

t.test('minute keys and starts', async (t) => {
  t.equal(minuteKey(at('2030-01-01T09:05:59.999Z')), '2030-01-01T09:05');
  t.equal(minuteKey(new Date('2030-12-31T23:59:00Z')), '2030-12-31T23:59');
  t.equal(minuteStart(at('2030-01-01T09:05:42.100Z')), at('2030-01-01T09:05:00Z'));
  t.equal(minuteStart(at('2030-01-01T09:05:00Z')), at('2030-01-01T09:05:00Z'));
});

t.test('cursor: full first, then each minute once, full again when far behind or due', async (t) => {
  const cursor = new TimeBucketCursor(MINUTE_MS, 10, 60 * MINUTE_MS);
  const nine = at('2030-01-01T09:00:00Z');
  t.same(cursor.plan(nine, nine), { full: true }, 'nothing read yet: in full');
  cursor.fullDone(nine, nine - MINUTE_MS);
  t.same(
    cursor.plan(nine + 5_000, nine),
    { full: false, buckets: [nine] },
    'the minutes after the full pass',
  );
  cursor.bucketDone(nine);
  t.same(cursor.plan(nine + 30_000, nine), { full: false, buckets: [] }, 'nothing new in the same minute');
  const later = nine + 3 * MINUTE_MS;
  t.same(cursor.plan(later, later), {
    full: false,
    buckets: [nine + MINUTE_MS, nine + 2 * MINUTE_MS, later],
  });
  cursor.bucketDone(nine + MINUTE_MS);
  t.same(
    cursor.plan(later, later),
    { full: false, buckets: [nine + 2 * MINUTE_MS, later] },
    'a minute not marked done is read again',
  );
  const farLater = later + 11 * MINUTE_MS;
  t.same(cursor.plan(farLater, farLater), { full: true }, 'more than 10 minutes behind: in full');
  cursor.fullDone(farLater, farLater);
  const hourLater = farLater + 60 * MINUTE_MS;
  t.same(cursor.plan(hourLater - 1, farLater), { full: false, buckets: [] });
  t.same(cursor.plan(hourLater, farLater), { full: true }, 'an hour after the last full pass');
  cursor.fullDone(hourLater, farLater);
  cursor.requestFull();
  t.same(cursor.plan(hourLater, farLater), { full: true }, 'on request');
});
