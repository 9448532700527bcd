import { argon2, createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { deserialize, serialize } from '@phc/format';

/** 256 bits of randomness, base64url (43 characters). */
export const randomSecret = (bytes = 32) => randomBytes(bytes).toString('base64url');

/**
 * SHA-256 (hex) of a high-entropy secret (API key, client secret, code, refresh token). A slow
 * hash adds nothing when the input has ≥ 128 random bits, and lookups stay cheap on every call.
 */
export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Constant-time comparison of two hex digests (or any strings of equal length). */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ba.length !== bb.length) {
    timingSafeEqual(ba, ba);
    return false;
  }
  return timingSafeEqual(ba, bb);
}

/**
 * Passwords are hashed with argon2id at OWASP's recommended cost (Password Storage Cheat Sheet:
 * m = 19 MiB, t = 2, p = 1; about 25 ms here), with Node's own `crypto.argon2` (OpenSSL's
 * implementation, on libuv's thread pool; no native addon or install script), stored as a PHC
 * string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`, written and read with @phc/format, the
 * serializer node-argon2 itself used, so hashes stored by earlier releases read the same way).
 * A hash made with other parameters verifies with its own and is marked for a rehash. Hashes from
 * still earlier releases (`scrypt$N$r$p$salt$hash`) verify too and are replaced at the next
 * successful sign-in.
 */
const ARGON2 = { id: 'argon2id', version: 19, m: 19_456, t: 2, p: 1, saltBytes: 16, hashBytes: 32 } as const;

interface Argon2Params {
  id: string;
  m: number;
  t: number;
  p: number;
  salt: Buffer;
  hashBytes: number;
}

function argon2Key(password: string, params: Argon2Params): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    argon2(
      params.id as 'argon2id',
      {
        message: password.normalize('NFKC'),
        nonce: params.salt,
        memory: params.m,
        passes: params.t,
        parallelism: params.p,
        tagLength: params.hashBytes,
      },
      (err, key) => (err ? reject(err) : resolve(key)),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(ARGON2.saltBytes);
  const hash = await argon2Key(password, { ...ARGON2, salt, hashBytes: ARGON2.hashBytes });
  const { id, version, m, t, p } = ARGON2;
  return serialize({ id, version, params: { m, t, p }, salt, hash });
}

/** A stored argon2 PHC string's parameters and hash; null when it is not one this code can check. */
function parseArgon2(stored: string): (Argon2Params & { version: number; hash: Buffer }) | null {
  try {
    const { id, version, params, salt, hash } = deserialize(stored);
    const { m, t, p } = params ?? {};
    const ok =
      ['argon2id', 'argon2i', 'argon2d'].includes(id) && salt && hash && [m, t, p].every(Number.isInteger);
    return ok ? { id, version: version ?? 16, m, t, p, salt, hash, hashBytes: hash.length } : null;
  } catch {
    return null;
  }
}

const outdated = (h: NonNullable<ReturnType<typeof parseArgon2>>) =>
  h.id !== ARGON2.id ||
  h.version !== ARGON2.version ||
  h.m !== ARGON2.m ||
  h.t !== ARGON2.t ||
  h.p !== ARGON2.p ||
  h.hashBytes !== ARGON2.hashBytes;

async function argon2Verify(stored: NonNullable<ReturnType<typeof parseArgon2>>, password: string) {
  const key = await argon2Key(password, stored).catch(() => null);
  return key !== null && key.length === stored.hash.length && timingSafeEqual(key, stored.hash);
}

/** A real hash of nothing anyone knows: checked when an account has no usable password. */
let dummyHash: Promise<string> | undefined;
const dummy = () => (dummyHash ??= hashPassword(randomSecret(32)));

// The earlier scheme, verify-only.
const SCRYPT_MAXMEM = 256 * 1024 * 1024;
function scryptVerify(password: string, stored: string): Promise<boolean> {
  const [, n, r, p, salt, hash] = stored.split('$');
  const expected = Buffer.from(hash ?? '', 'base64url');
  if (!salt || expected.length === 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const options = { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT_MAXMEM };
    scrypt(password.normalize('NFKC'), Buffer.from(salt, 'base64url'), expected.length, options, (err, key) =>
      resolve(!err && timingSafeEqual(key, expected)),
    );
  });
}

export interface PasswordCheck {
  valid: boolean;
  /** Valid, but hashed with other parameters or scheme: store a fresh hash. */
  needsRehash: boolean;
}

/**
 * Checks a password against a stored hash. Every path runs one argon2id verification: against
 * the stored hash, or against a dummy hash when there is none (unknown account, no password
 * set) or it is a legacy scrypt hash, so every failure costs at least the same time (no
 * enumeration by timing). A legacy hash is checked with scrypt alongside, in parallel on
 * libuv's thread pool, so it adds time only where scrypt is slower than argon2id, and only
 * until the account's next sign-in replaces the hash.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<PasswordCheck> {
  const legacy = stored?.startsWith('scrypt$') ? stored : null;
  const own = stored?.startsWith('$argon2') ? parseArgon2(stored) : null;
  const checked = own ?? parseArgon2(await dummy())!;
  const [matches, legacyValid] = await Promise.all([
    argon2Verify(checked, password),
    legacy ? scryptVerify(password, legacy) : false,
  ]);
  if (legacy) return { valid: legacyValid, needsRehash: legacyValid };
  const valid = matches && own !== null;
  return { valid, needsRehash: valid && outdated(own) };
}

const PASSWORD_MIN = 12;
const PASSWORD_MAX = 256;

/** Null when acceptable, else the reason. */
export function checkPasswordPolicy(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return null;
}
