import t from 'tap';
import { singleFlight, TtlCache } from '../src/subpaths/core.js';

t.test('entries expire at their own time, the least recently used make room, lookups are told', (t) => {
  const seen: string[] = [];
  const cache = new TtlCache<string, number | null>(2, {
    hit: () => seen.push('hit'),
    miss: () => seen.push('miss'),
  });
  cache.set('a', 1, 1000, 0);
  cache.set('absent', null, 1000, 0);
  t.equal(cache.get('absent', 10), null, 'null is a value (known absent), not a miss');
  t.equal(cache.get('a', 999), 1);
  t.equal(cache.get('a', 1000), undefined, 'expired at its time');
  cache.set('a', 1, 1000, 0);
  cache.get('absent', 10); // now the most recently used
  cache.set('b', 2, 1000, 0);
  t.equal(cache.size, 2);
  t.equal(cache.get('a', 10), undefined, 'the least recently used made room');
  t.equal(cache.get('absent', 10), null);
  cache.set('c', 3, 0, 0);
  t.equal(cache.get('c', 0), undefined, 'a ttl of 0 keeps nothing');
  t.same(seen, ['hit', 'hit', 'miss', 'hit', 'miss', 'hit', 'miss']);
  t.equal(
    cache.deleteWhere((v) => v === null),
    1,
  );
  t.equal(cache.size, 1);
  t.end();
});

t.test('concurrent loads of one key share one call', async (t) => {
  const flight = singleFlight<string, number>();
  let calls = 0;
  const load = async () => {
    calls++;
    await new Promise((r) => setTimeout(r, 10));
    return 7;
  };
  t.same(await Promise.all([flight('k', load), flight('k', load)]), [7, 7]);
  t.equal(calls, 1);
  t.equal(await flight('k', load), 7);
  t.equal(calls, 2, 'a finished load is not kept');
});

t.test('with staleMs, an expired entry is a miss for get and still there for getStale, that long', (t) => {
  const cache = new TtlCache<string, string>(10, undefined, 1000);
  cache.set('k', 'v', 100, 0);
  t.equal(cache.get('k', 50), 'v');
  t.equal(cache.get('k', 100), undefined, 'expired: a miss');
  t.equal(cache.getStale('k', 100), 'v', 'but the last answer is kept');
  t.equal(cache.getStale('k', 1099), 'v');
  t.equal(cache.getStale('k', 1100), undefined, 'past staleMs: gone');
  t.equal(cache.size, 0);
  const plain = new TtlCache<string, string>(10);
  plain.set('k', 'v', 100, 0);
  t.equal(plain.getStale('k', 100), undefined, 'without staleMs nothing outlives its TTL');
  t.end();
});
