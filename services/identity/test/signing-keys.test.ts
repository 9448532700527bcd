// The access-token keyring's failures are counted (the IdentitySigningKeyErrors alert): a key file
// that can no longer be read fails the issuing of tokens, and says so in the metric.
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metricValue } from '@support-desk/platform/testing';
import t from 'tap';
import type { IdentityConfig } from '../src/config.js';
import { createKeyring } from '../src/oauth/keys.js';

t.test('a key file that cannot be read again: signing fails and is counted', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sd-keys-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const config = { IDENTITY_DATA_DIR: dir, OAUTH_ACCESS_TTL_SECONDS: 900 } as IdentityConfig;
  const keyring = await createKeyring(config);
  const { kid } = await keyring.signer();
  t.ok(kid, 'a development key made and used');
  const before = await metricValue('identity_signing_key_errors_total', { use: 'sign' });

  // A broken rotation: the file is rewritten with something that is not a key file.
  const file = join(dir, 'oauth-signing-keys.json');
  await writeFile(file, '{ not json');
  const later = new Date(Date.now() + 60_000);
  await utimes(file, later, later);
  // The keyring looks at the file again at most every 5 s (real time).
  await new Promise((r) => setTimeout(r, 5_100));
  await t.rejects(keyring.signer(), 'no token can be signed');
  t.equal(await metricValue('identity_signing_key_errors_total', { use: 'sign' }), before + 1, 'counted');
});
