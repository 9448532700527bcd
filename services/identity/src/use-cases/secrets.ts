import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import argon2 from 'argon2';

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
 * m = 19 MiB, t = 2, p = 1; about 25 ms here), through node-argon2 (the reference C
 * implementation, prebuilt for glibc and musl, with a PHC-string API that says when a hash was
 * made with other parameters). Hashes from earlier releases (`scrypt$N$r$p$salt$hash`) still
 * verify and are replaced at the next successful sign-in.
 */
const ARGON2 = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> =>
  argon2.hash(password.normalize('NFKC'), ARGON2);

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
  const hash = stored?.startsWith('$argon2') ? stored : await dummy();
  const [matches, legacyValid] = await Promise.all([
    argon2.verify(hash, password.normalize('NFKC')).catch(() => false),
    legacy ? scryptVerify(password, legacy) : false,
  ]);
  if (legacy) return { valid: legacyValid, needsRehash: legacyValid };
  const valid = matches && hash === stored;
  return { valid, needsRehash: valid && argon2.needsRehash(hash, ARGON2) };
}

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/** Null when acceptable, else the reason. */
export function checkPasswordPolicy(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return null;
}
