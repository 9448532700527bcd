import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isServiceName, SERVICE_NAMES, type ServiceName } from '@support-desk/contracts';
import { ConfigError } from './config.js';
import {
  type MessageSigner,
  messageSigner,
  type MessageVerifier,
  messageVerifier,
} from './message-signing.js';
import { pemBlocks } from './principal.js';

interface KeysConfig {
  NODE_ENV: string;
  SERVICE_SIGNING_KEY?: string;
  SERVICE_VERIFY_KEYS?: string;
  ACCEPT_UNSIGNED_UNTIL?: string;
}

/**
 * Outside production (`NODE_ENV` not `production`) and with neither variable set, the keys of
 * every service come from one development file, made once: `npm start`, deskctl, the tests and
 * the end-to-end stacks of a checkout then agree without configuration. Deployments set both.
 */
export const DEV_SERVICE_KEYS_FILE = resolve(
  fileURLToPath(import.meta.url),
  '../../../../../.data/service-keys.json',
);

/** A key pair per service, as the two variables hold them (the verify keys as JSON text). */
export function generateServiceKeys(): { signingKeys: Record<ServiceName, string>; verifyKeys: string } {
  const signingKeys = {} as Record<ServiceName, string>;
  const verify: Record<string, string> = {};
  for (const service of SERVICE_NAMES) {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    signingKeys[service] = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    verify[service] = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }
  return { signingKeys, verifyKeys: JSON.stringify(verify) };
}

type DevKeys = ReturnType<typeof generateServiceKeys>;

/** The development key file, made by whichever process needs it first (atomically: a link). */
export function developmentServiceKeys(file = DEV_SERVICE_KEYS_FILE): DevKeys {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as DevKeys;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, JSON.stringify(generateServiceKeys()), { mode: 0o600 });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as DevKeys;
}

function parseVerifyKeys(text: string): Partial<Record<ServiceName, KeyObject[]>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError('Invalid configuration: SERVICE_VERIFY_KEYS must be a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError('Invalid configuration: SERVICE_VERIFY_KEYS must be a JSON object');
  const keys: Partial<Record<ServiceName, KeyObject[]>> = {};
  for (const [service, pem] of Object.entries(parsed)) {
    const problem = `Invalid configuration: SERVICE_VERIFY_KEYS.${service}`;
    if (!isServiceName(service)) throw new ConfigError(`${problem} is not a service`);
    const blocks = typeof pem === 'string' ? pemBlocks(pem) : [];
    if (blocks.length === 0) throw new ConfigError(`${problem} must hold PEM public key(s)`);
    keys[service] = blocks.map((block) => {
      const key = createPublicKey(block);
      if (key.asymmetricKeyType !== 'ed25519') throw new ConfigError(`${problem} is not an Ed25519 key`);
      return key;
    });
  }
  return keys;
}

function configured(config: KeysConfig): { signingKey?: string; verifyKeys: string } {
  if (config.SERVICE_VERIFY_KEYS)
    return { signingKey: config.SERVICE_SIGNING_KEY, verifyKeys: config.SERVICE_VERIFY_KEYS };
  if (config.SERVICE_SIGNING_KEY)
    throw new ConfigError('Invalid configuration: SERVICE_VERIFY_KEYS must be set with SERVICE_SIGNING_KEY');
  if (config.NODE_ENV === 'production')
    throw new ConfigError(
      'Invalid configuration: SERVICE_VERIFY_KEYS must be set in production (the development key file is for development)',
    );
  return { verifyKeys: developmentServiceKeys().verifyKeys };
}

/** How this service checks what other services send it. */
export function serviceVerifier(config: KeysConfig): MessageVerifier {
  const until = config.ACCEPT_UNSIGNED_UNTIL;
  return messageVerifier(parseVerifyKeys(configured(config).verifyKeys), {
    ...(until ? { acceptUnsignedUntil: Date.parse(until) } : {}),
  });
}

/**
 * How `service` signs what it sends. Its key must be the one the other services know it by (its
 * entry in SERVICE_VERIFY_KEYS), or nothing it sends would be accepted: refused at start.
 */
export function serviceSigner(service: ServiceName, config: KeysConfig): MessageSigner {
  const { signingKey, verifyKeys } = configured(config);
  const pem =
    signingKey ?? (config.SERVICE_VERIFY_KEYS ? undefined : developmentServiceKeys().signingKeys[service]);
  if (!pem)
    throw new ConfigError(
      `Invalid configuration: SERVICE_SIGNING_KEY (missing): ${service} signs what it sends`,
    );
  let key: KeyObject;
  try {
    key = createPrivateKey(pemBlocks(pem)[0] ?? '');
  } catch {
    throw new ConfigError('Invalid configuration: SERVICE_SIGNING_KEY is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new ConfigError('Invalid configuration: SERVICE_SIGNING_KEY is not an Ed25519 key');
  const own = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const known = parseVerifyKeys(verifyKeys)[service] ?? [];
  if (!known.some((k) => k.export({ type: 'spki', format: 'der' }).equals(own)))
    throw new ConfigError(
      `Invalid configuration: SERVICE_SIGNING_KEY is not ${service}'s key in SERVICE_VERIFY_KEYS`,
    );
  return messageSigner(service, key);
}
