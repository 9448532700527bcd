// Signatures between services (message-signing.ts) and the keys' configuration (service-keys.ts):
// who signed, for which subject and when, and the configuration refused when it cannot work.
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { ConfigError } from '../src/subpaths/core.js';
import {
  EARLIER_RELEASE,
  generateServiceKeys,
  messageSigner,
  messageVerifier,
  serviceSigner,
  serviceVerifier,
  signatureOf,
  UnauthenticatedMessageError,
} from '../src/subpaths/messaging.js';

const data = new TextEncoder().encode('{"op":"create"}');
const subject = 'sd.admin.webhooks';
const pair = () => generateKeyPairSync('ed25519');

/** What `fn` threw (it must throw). */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

t.test('the signer is known by its key, for this subject and these bytes', async (t) => {
  const identity = pair();
  const other = pair();
  const verifier = messageVerifier({ identity: [other.publicKey, identity.publicKey] });
  const signer = messageSigner('identity', identity.privateKey);
  const signature = signatureOf(signer.sign(subject, data));
  t.equal(verifier.sender(subject, data, signature), 'identity', 'either key of a rotation verifies');
  const refused = (fn: () => unknown, reason: RegExp, what: string) => {
    const err = thrown(fn);
    t.ok(err instanceof UnauthenticatedMessageError, what);
    t.match(err.message, reason, what);
  };
  refused(
    () => verifier.sender('sd.events.user.created', data, signature),
    /not signed by identity/,
    'another subject',
  );
  refused(
    () => verifier.sender(subject, new TextEncoder().encode('{"op":"delete"}'), signature),
    /not signed/,
    'other bytes',
  );
  refused(() => verifier.sender(subject, data, undefined), /unsigned/, 'no signature');
  refused(
    () => verifier.sender(subject, data, { ...signature!, signer: 'requests' }),
    /not signed by requests/,
    'another signer named: its key does not verify',
  );
  refused(
    () => verifier.sender(subject, data, { ...signature!, signer: 'mallory' }),
    /unknown signer/,
    'no such service',
  );
  refused(
    () =>
      verifier.sender(subject, data, {
        ...signature!,
        signature: signature!.signature.replace('v1:', 'v9:'),
      }),
    /scheme "v9"/,
    'a scheme this release does not know',
  );
  const forged = messageSigner('identity', pair().privateKey);
  refused(
    () => verifier.sender(subject, data, signatureOf(forged.sign(subject, data))),
    /not signed by identity/,
    'another key',
  );
});

t.test('requests are refused when stale; unsigned messages only within an upgrade window', async (t) => {
  const identity = pair();
  const signature = signatureOf(messageSigner('identity', identity.privateKey).sign(subject, data))!;
  const now = Number(signature.signedAt);
  const verifier = messageVerifier({ identity: [identity.publicKey] }, { acceptUnsignedUntil: now + 60_000 });
  t.equal(verifier.sender(subject, data, signature, { maxAgeMs: 30_000, now: now + 29_000 }), 'identity');
  t.throws(() => verifier.sender(subject, data, signature, { maxAgeMs: 30_000, now: now + 31_000 }), /stale/);
  t.throws(() => verifier.sender(subject, data, signature, { maxAgeMs: 30_000, now: now - 10_000 }), /stale/);
  t.equal(
    verifier.sender(subject, data, signature, { now: now + 3_600_000 }),
    'identity',
    'an event has no age',
  );
  t.equal(
    verifier.sender(subject, data, undefined, { now: now + 1000 }),
    EARLIER_RELEASE,
    'unsigned, in the window',
  );
  t.throws(() => verifier.sender(subject, data, undefined, { now: now + 61_000 }), /unsigned/, 'after it');
  const forged = { ...signature, signature: `v1:${Buffer.alloc(64).toString('base64url')}` };
  t.throws(
    () => verifier.sender(subject, data, forged, { now: now + 1000 }),
    /not signed/,
    'a bad signature, even in it',
  );
});

t.test('the keys: each service its own, checked at start; none by default in production', async (t) => {
  const keys = generateServiceKeys();
  const configured = (service: 'gateway' | 'identity', env: Record<string, string | undefined>) =>
    serviceSigner(service, { NODE_ENV: 'production', ...env });
  const gateway = configured('gateway', {
    SERVICE_SIGNING_KEY: keys.signingKeys.gateway,
    SERVICE_VERIFY_KEYS: keys.verifyKeys,
  });
  const verifier = serviceVerifier({ NODE_ENV: 'production', SERVICE_VERIFY_KEYS: keys.verifyKeys });
  t.equal(verifier.sender(subject, data, signatureOf(gateway.sign(subject, data))), 'gateway');
  const problem = (fn: () => unknown, message: RegExp, what: string) => {
    const err = thrown(fn);
    t.ok(err instanceof ConfigError, what);
    t.match(err.message, message, what);
  };
  problem(
    () =>
      configured('identity', {
        SERVICE_SIGNING_KEY: keys.signingKeys.gateway,
        SERVICE_VERIFY_KEYS: keys.verifyKeys,
      }),
    /SERVICE_SIGNING_KEY is not identity's key/,
    "another service's key",
  );
  problem(
    () => configured('identity', {}),
    /SERVICE_VERIFY_KEYS must be set in production/,
    'none in production',
  );
  problem(
    () => configured('identity', { SERVICE_SIGNING_KEY: keys.signingKeys.identity }),
    /SERVICE_VERIFY_KEYS must be set/,
    'a private key without the public ones',
  );
  problem(
    () => configured('identity', { SERVICE_VERIFY_KEYS: keys.verifyKeys }),
    /SERVICE_SIGNING_KEY/,
    'public keys without its own',
  );
  problem(
    () => serviceVerifier({ NODE_ENV: 'production', SERVICE_VERIFY_KEYS: '{"mallory":"x"}' }),
    /SERVICE_VERIFY_KEYS\.mallory is not a service/,
    'an unknown service',
  );
  problem(
    () => serviceVerifier({ NODE_ENV: 'production', SERVICE_VERIFY_KEYS: '{"gateway":"not a key"}' }),
    /SERVICE_VERIFY_KEYS\.gateway must hold PEM/,
    'not a key',
  );
  problem(
    () => serviceVerifier({ NODE_ENV: 'production', SERVICE_VERIFY_KEYS: '[1]' }),
    /JSON object/,
    'not an object',
  );
  const dev = serviceSigner('identity', { NODE_ENV: 'development' });
  t.equal(
    serviceVerifier({ NODE_ENV: 'test' }).sender(subject, data, signatureOf(dev.sign(subject, data))),
    'identity',
    'outside production, unset: the development key file, the same for every process',
  );
});
