import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Signing secrets: made here, shown once, kept encrypted at rest. They cannot be stored hashed
 * like API keys: the service needs them in clear to sign every delivery. AES-256-GCM with the
 * key of WEBHOOKS_SECRET_KEY; a database dump alone does not reveal them.
 */
export function createSecretBox(keyBase64: string) {
  const key = Buffer.from(keyBase64, 'base64');
  if (key.length !== 32) throw new Error('WEBHOOKS_SECRET_KEY must be 32 bytes, base64');
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
      const raw = Buffer.from(sealed.slice(3), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;
