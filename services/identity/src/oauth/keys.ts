import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { IdentityConfig } from '../config.js';
import { signingKeyErrors } from '../metrics.js';

/**
 * Access-token signing keys. From `OAUTH_SIGNING_KEYS` (JSON array of private JWKs; the first
 * signs, the others are only published so tokens they signed stay verifiable) or, when unset,
 * from a development key file under IDENTITY_DATA_DIR, generated once. `deskctl oauth-keys
 * rotate` adds a new key to that file and keeps retired ones in the JWKS until every token they
 * signed has expired.
 */
interface SigningKey {
  kid: string;
  alg: 'ES256' | 'EdDSA';
  key: Awaited<ReturnType<typeof importJWK>>;
}

export interface Keyring {
  signer(): Promise<SigningKey>;
  jwks(): Promise<{ keys: JWK[] }>;
}

interface StoredKey {
  jwk: JWK;
  createdAt: string;
  retiredAt: string | null;
}

interface KeyFile {
  keys: StoredKey[];
}

const FILE = 'oauth-signing-keys.json';
const PUBLIC_FIELDS = ['kty', 'crv', 'x', 'y', 'kid', 'alg'] as const;

function algOf(jwk: JWK): 'ES256' | 'EdDSA' {
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  throw new Error(`unsupported signing key ${jwk.kid ?? ''}: use EC P-256 (ES256) or OKP Ed25519 (EdDSA)`);
}

function publicJwk(jwk: JWK): JWK {
  const out: JWK = { use: 'sig' };
  for (const f of PUBLIC_FIELDS) if (jwk[f] !== undefined) (out as Record<string, unknown>)[f] = jwk[f];
  out.alg = algOf(jwk);
  return out;
}

async function newKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  jwk.kid = await calculateJwkThumbprint(jwk);
  jwk.alg = 'ES256';
  return jwk;
}

const filePath = (config: IdentityConfig) => join(config.IDENTITY_DATA_DIR, FILE);

async function readKeyFile(config: IdentityConfig): Promise<KeyFile | null> {
  try {
    return JSON.parse(await readFile(filePath(config), 'utf8')) as KeyFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function writeKeyFile(config: IdentityConfig, file: KeyFile, exclusive: boolean): Promise<void> {
  await mkdir(config.IDENTITY_DATA_DIR, { recursive: true, mode: 0o700 });
  const json = JSON.stringify(file, null, 2);
  if (exclusive) {
    await writeFile(filePath(config), json, { flag: 'wx', mode: 0o600 });
    return;
  }
  const tmp = `${filePath(config)}.${process.pid}.tmp`;
  await writeFile(tmp, json, { mode: 0o600 });
  await rename(tmp, filePath(config));
}

/** Reads the dev key file, creating it (once, race-safe) when missing. */
async function loadOrCreateKeyFile(config: IdentityConfig, now: Date): Promise<KeyFile> {
  const existing = await readKeyFile(config);
  if (existing && existing.keys.length > 0) return existing;
  try {
    await writeKeyFile(
      config,
      { keys: [{ jwk: await newKey(), createdAt: now.toISOString(), retiredAt: null }] },
      true,
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return (await readKeyFile(config))!;
}

export async function rotateDevSigningKey(config: IdentityConfig, now: Date) {
  if (config.OAUTH_SIGNING_KEYS) {
    throw new Error('OAUTH_SIGNING_KEYS is set: rotate by putting the new key first in that list');
  }
  const file = await loadOrCreateKeyFile(config, now);
  const horizon = now.getTime() - config.OAUTH_ACCESS_TTL_SECONDS * 1000;
  const keys = file.keys
    .filter((k) => !k.retiredAt || Date.parse(k.retiredAt) > horizon)
    .map((k) => (k.retiredAt ? k : { ...k, retiredAt: now.toISOString() }));
  const jwk = await newKey();
  keys.push({ jwk, createdAt: now.toISOString(), retiredAt: null });
  await writeKeyFile(config, { keys }, false);
  return {
    kid: jwk.kid!,
    retainUntil: new Date(now.getTime() + config.OAUTH_ACCESS_TTL_SECONDS * 1000).toISOString(),
  };
}

interface Loaded {
  signer: SigningKey;
  published: JWK[];
}

async function toSigner(jwk: JWK): Promise<SigningKey> {
  if (!jwk.kid) throw new Error('every signing key needs a kid');
  const alg = algOf(jwk);
  return { kid: jwk.kid, alg, key: await importJWK(jwk, alg) };
}

async function loadFromConfig(raw: string): Promise<Loaded> {
  let jwks: JWK[];
  try {
    jwks = JSON.parse(raw) as JWK[];
  } catch {
    throw new Error('OAUTH_SIGNING_KEYS must be a JSON array of private JWKs');
  }
  if (!Array.isArray(jwks) || jwks.length === 0 || !jwks[0].d) {
    throw new Error('OAUTH_SIGNING_KEYS must be a non-empty JSON array whose first key is private');
  }
  return { signer: await toSigner(jwks[0]), published: jwks.map(publicJwk) };
}

async function loadFromFile(config: IdentityConfig, now: Date): Promise<Loaded> {
  const file = await loadOrCreateKeyFile(config, now);
  const horizon = now.getTime() - config.OAUTH_ACCESS_TTL_SECONDS * 1000;
  const active = file.keys.filter((k) => !k.retiredAt).at(-1) ?? file.keys.at(-1)!;
  const published = file.keys
    .filter((k) => !k.retiredAt || Date.parse(k.retiredAt) > horizon)
    .map((k) => publicJwk(k.jwk));
  return { signer: await toSigner(active.jwk), published };
}

const RECHECK_MS = 5000;

/** Loads keys at start (failing fast on bad configuration) and notices dev-file rotations. */
export async function createKeyring(
  config: IdentityConfig,
  clock: () => Date = () => new Date(),
): Promise<Keyring> {
  let loaded = config.OAUTH_SIGNING_KEYS
    ? await loadFromConfig(config.OAUTH_SIGNING_KEYS)
    : await loadFromFile(config, clock());
  let checkedAt = Date.now();
  let mtime = config.OAUTH_SIGNING_KEYS ? 0 : (await stat(filePath(config))).mtimeMs;
  const current = async () => {
    if (config.OAUTH_SIGNING_KEYS || Date.now() - checkedAt < RECHECK_MS) return loaded;
    checkedAt = Date.now();
    const m = (await stat(filePath(config)).catch(() => null))?.mtimeMs ?? 0;
    if (m !== mtime) {
      loaded = await loadFromFile(config, clock());
      mtime = m;
    }
    return loaded;
  };
  // A key file that cannot be read again (a bad rotation, a broken volume) fails every token issued
  // and the JWKS: counted, for the IdentitySigningKeyErrors alert.
  const counted = async (use: 'sign' | 'publish') => {
    try {
      return await current();
    } catch (err) {
      signingKeyErrors.inc({ use });
      throw err;
    }
  };
  return {
    signer: async () => (await counted('sign')).signer,
    jwks: async () => ({ keys: (await counted('publish')).published }),
  };
}
