import t from 'tap';
import { hashPassword, verifyPassword } from '../src/use-cases/secrets.js';

const password = 'correct horse battery staple';

/** Stored by earlier releases through node-argon2 0.45 (the same password): they must still sign in. */
const NODE_ARGON2_CURRENT =
  '$argon2id$v=19$m=19456,p=1,t=2$tBojuUPPDf0s48qh4+grUg$ja/LkUgYS3CCZoPNmsZbmR8P/i32yhkbkZczx5qj6eU';
const NODE_ARGON2_WEAKER =
  '$argon2id$v=19$m=4096,p=1,t=3$huM/TYetlGSY6rvV0LJoYw$YhXYSf2V1/n1UdmL4h5kisawkF6HLBiU4QEm6NEnxEo';

t.test(
  'a new hash is an argon2id PHC string at the current cost, and checks only its password',
  async (t) => {
    const stored = await hashPassword(password);
    t.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    t.not(await hashPassword(password), stored, 'salted: two hashes of one password differ');
    t.same(await verifyPassword(password, stored), { valid: true, needsRehash: false });
    t.same(await verifyPassword(`${password}!`, stored), { valid: false, needsRehash: false });
    // NFKC: the same password typed with a composed or a decomposed accent.
    const accented = await hashPassword('caf\u00e9 au lait, s\u2019il vous pla\u00eet');
    t.equal((await verifyPassword('cafe\u0301 au lait, s\u2019il vous pla\u00eet', accented)).valid, true);
  },
);

t.test(
  'hashes stored by node-argon2 (earlier releases) verify; other parameters ask for a rehash',
  async (t) => {
    t.same(await verifyPassword(password, NODE_ARGON2_CURRENT), { valid: true, needsRehash: false });
    t.same(await verifyPassword(password, NODE_ARGON2_WEAKER), { valid: true, needsRehash: true });
    t.same(await verifyPassword('not it', NODE_ARGON2_WEAKER), { valid: false, needsRehash: false });
  },
);

t.test('no usable hash never verifies', async (t) => {
  for (const stored of [
    null,
    '',
    '$argon2id$v=19$m=19456$broken',
    '$argon2id$v=19$m=x,t=2,p=1$AAAA$AAAA',
    'plain',
  ]) {
    t.same(await verifyPassword(password, stored), { valid: false, needsRehash: false }, String(stored));
  }
});
