import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The most secrets kept opened in memory (those of the subscriptions delivered to lately). */
const OPENED_LIMIT = 1024;

/**
 * Signing secrets: made here, shown once, kept encrypted at rest. They cannot be stored hashed
 * like API keys: the service needs them in clear to sign every delivery. AES-256-GCM with the
 * key of WEBHOOKS_SECRET_KEY; a database dump alone does not reveal them. An opened secret is kept
 * in memory for the next attempts (a bounded map; every attempt opened it again before), which
 * the process held in clear for each attempt anyway.
 */
export function createSecretBox(keyBase64: string) {
  const key = Buffer.from(keyBase64, 'base64');
  if (key.length !== 32) throw new Error('WEBHOOKS_SECRET_KEY must be 32 bytes, base64');
  const opened = new Map<string, string>();
  function decrypt(sealed: string): string {
    const raw = Buffer.from(sealed.slice(3), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
  return {
    /** A new secret in the Standard Webhooks form: `whsec_` and 24 random bytes in base64. */
    generate: () => `whsec_${randomBytes(24).toString('base64')}`,

    seal(secret: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `v1.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
    },

    open(sealed: string): string {
      let secret = opened.get(sealed);
      if (secret === undefined) {
        secret = decrypt(sealed);
        // Past the bound, the lot goes (simpler than an order kept per read; refilled as used).
        if (opened.size >= OPENED_LIMIT) opened.clear();
        opened.set(sealed, secret);
      }
      return secret;
    },
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;
