import t from 'tap';
import { batchedCalls, freshReads } from '../src/fresh-reads.js';

/** A read of a value that writes change; each read answers what was written when it started. */
function store() {
  let value = 0;
  const started: number[] = [];
  let release: (() => void)[] = [];
  return {
    write: (v: number) => void (value = v),
    started,
    /** Lets the reads in progress answer. */
    finishReads: () => {
      const now = release;
      release = [];
      for (const r of now) r();
    },
    read: () => {
      const seen = value;
      started.push(seen);
      return new Promise<number>((resolve) => release.push(() => resolve(seen)));
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));

t.test('a caller alone reads at once', async (t) => {
  const s = store();
  const live = freshReads(s.read);
  const answer = live();
  t.equal(s.started.length, 1);
  s.finishReads();
  t.equal(await answer, 0);
});

t.test(
  'callers during a read share the next one, which sees what was written before they asked',
  async (t) => {
    const s = store();
    const live = freshReads(s.read);
    const first = live();
    s.write(1); // written after the first read started: the callers below must see it
    const later = [live(), live(), live()];
    t.equal(s.started.length, 1, 'no second read while the first runs');
    s.finishReads();
    t.equal(await first, 0);
    await turn();
    t.same(s.started, [0, 1], 'one read after the first, for all three');
    s.finishReads();
    t.same(await Promise.all(later), [1, 1, 1]);
  },
);

t.test('a failed read fails the callers that shared it; the next caller reads again', async (t) => {
  let fail = true;
  let reads = 0;
  const live = freshReads(async () => {
    reads++;
    if (fail) throw new Error('store down');
    return 'ok';
  });
  const [a, b] = [live(), live()];
  await t.rejects(a, /store down/);
  await t.rejects(b, /store down/);
  fail = false;
  t.equal(await live(), 'ok');
  t.equal(reads, 3, 'the first, the one shared after it, and the last');
});

t.test('batched calls: one alone goes at once, those made meanwhile go together next', async (t) => {
  const batches: number[][] = [];
  const answer: (() => void)[] = [];
  const double = batchedCalls(async (args: number[]) => {
    batches.push(args);
    await new Promise<void>((r) => answer.push(r));
    return args.map((n) => n * 2);
  });
  const first = double(1);
  await turn();
  t.same(batches, [[1]], 'alone: at once');
  const rest = [double(2), double(3), double(4)];
  await turn();
  t.same(batches, [[1]], 'none joins the batch under way');
  answer.shift()!();
  t.equal(await first, 2);
  await turn();
  t.same(batches, [[1], [2, 3, 4]], 'the next batch holds every call made meanwhile');
  answer.shift()!();
  t.same(await Promise.all(rest), [4, 6, 8], 'each caller gets its own answer');
});

t.test('batched calls: a linger gathers calls a moment apart; a failure fails its batch', async (t) => {
  const batches: string[][] = [];
  const upper = batchedCalls(
    async (args: string[]) => {
      batches.push(args);
      if (args.includes('bad')) throw new Error('refused');
      return args.map((s) => s.toUpperCase());
    },
    { lingerMs: 20 },
  );
  const a = upper('a');
  await turn();
  const b = upper('b');
  t.same(await Promise.all([a, b]), ['A', 'B']);
  t.same(batches, [['a', 'b']], 'one batch for calls within the linger');
  const failed = [upper('c'), upper('bad')];
  for (const call of failed) await t.rejects(call, /refused/);
  t.equal(await upper('d'), 'D', 'the next batch goes on');
});
