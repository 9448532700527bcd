import t from 'tap';
import { humanBytes } from '../src/human-bytes.js';

t.test('sizes in binary units with at most one decimal', async (t) => {
  const cases: [number, string][] = [
    [0, '0 bytes'],
    [1, '1 byte'],
    [1023, '1023 bytes'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [64 * 1024, '64 KiB'],
    [1024 * 1024, '1 MiB'],
    [25 * 1024 * 1024, '25 MiB'],
    [25 * 1024 * 1024 + 64 * 1024, '25.1 MiB'],
    [1024 * 1024 - 1, '1024 KiB'],
    [3 * 1024 ** 3, '3 GiB'],
    [5 * 1024 ** 4, '5 TiB'],
  ];
  for (const [bytes, text] of cases) t.equal(humanBytes(bytes), text, String(bytes));
});
