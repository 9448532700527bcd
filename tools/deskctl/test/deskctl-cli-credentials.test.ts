import { type ResolveApiKeyReply } from '@support-desk/contracts';
import { callRpc } from '@support-desk/platform/messaging';
import { eventually } from '@support-desk/platform/testing';
import t from 'tap';
import {
  authorizeThroughForms,
  callerOf,
  cliContext,
  createUser,
  FormBrowser,
  pkceAuthorizeUrl,
} from '@support-desk/identity/testing';
import { ESC, onTerminal, SCRIPT, storeSession } from './deskctl-session.js';

// deskctl's credential commands against a real store and NATS (issue 19): API keys with their
// last use, OAuth clients and their grants, and destructive commands asking (or refusing) first.

t.test('credential commands against the store', async (t) => {
  const { h, issuer, run, json, boot, ada } = await storeSession(t);
  // An agent's key that was never used, and a group for the terminal's table.
  await json('api-keys create --owner ada@example.com --name ci --scopes requests:read'.split(' '));
  await json(['groups', 'create', '--name', 'Tier 1']);

  await t.test('api-keys list shows the last use', async (t) => {
    const resolved = await callRpc<{ key: string }, ResolveApiKeyReply>(
      h.nc,
      h.names.rpc.resolveApiKey,
      {
        key: boot.key,
      },
      callerOf('resolveApiKey'),
    );
    t.match(resolved, { valid: true });
    // The use is recorded beside the answer (not before it): read until it has landed.
    const keys = await eventually(
      async () => {
        const { keys } = await json(['api-keys', 'list', '--owner', 'root@example.com']);
        return keys[0]?.lastUsedAt ? keys : undefined;
      },
      { timeoutMs: 10_000, what: 'lastUsedAt recorded' },
    );
    t.equal(keys.length, 1);
    t.ok(Date.parse(keys[0].lastUsedAt) > 0, 'lastUsedAt set by the use');
    const table = await run(['api-keys', 'list']);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    t.match(header, /^ID +NAME +OWNER +SCOPES +PLAN +CREATED +EXPIRES +LAST USED +STATUS$/);
    const at = header.indexOf('LAST USED');
    const rootRow = rows.find((r) => r.startsWith(boot.keyId))!;
    const adaRow = rows.find((r) => !r.startsWith(boot.keyId))!;
    t.match(rootRow.slice(at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +active$/);
    t.match(adaRow.slice(at), /^never +active$/);
  });

  await t.test(
    'oauth-clients list / revoke: a revoked client is refused at the token endpoint and its live grants end',
    async (t) => {
      const made = await json([
        'oauth-clients',
        'create',
        '--name',
        'Web',
        '--redirect-uri',
        'https://app.example.com/cb',
      ]);
      const again = await json([
        'oauth-clients',
        'create',
        '--name',
        'Web',
        '--redirect-uri',
        'https://x.example.com/cb',
        '--if-not-exists',
      ]);
      t.match(again, { client_id: made.client_id, existed: true });
      t.notOk('client_secret' in again, 'the secret is never shown again');
      const token = () =>
        h.app.inject({
          method: 'POST',
          url: '/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            grant_type: 'authorization_code',
            code: 'gnt_unknown.code',
            redirect_uri: 'https://app.example.com/cb',
            client_id: made.client_id,
            client_secret: made.client_secret,
          }).toString(),
        });
      t.match(
        JSON.parse((await token()).body),
        { error: 'invalid_grant' },
        'before: the client authenticates',
      );

      // A live grant of the client: a user signs in, consents, and the code is exchanged.
      const password = 'correct horse battery staple';
      const owner = await createUser(h.deps, cliContext(), {
        email: 'grant.owner@example.com',
        name: 'Grant Owner',
        role: 'agent',
        password,
      });
      const { url: authorize, verifier } = pkceAuthorizeUrl(issuer, {
        client_id: made.client_id,
        redirect_uri: 'https://app.example.com/cb',
        scope: 'requests:read',
      });
      const callback = await authorizeThroughForms(new FormBrowser(issuer), authorize.toString(), {
        email: 'grant.owner@example.com',
        password,
      });
      const exchanged = await h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code') ?? '',
          redirect_uri: 'https://app.example.com/cb',
          client_id: made.client_id,
          client_secret: made.client_secret,
          code_verifier: verifier,
        }).toString(),
      });
      t.equal(exchanged.statusCode, 200, 'the code is exchanged', { body: exchanged.body });
      t.ok(JSON.parse(exchanged.body).refresh_token, 'a live grant, with a refresh token');

      const { clients } = await json(['oauth-clients', 'list']);
      t.match(clients, [{ client_id: made.client_id, name: 'Web', public: false, revokedAt: null }]);
      t.notOk(JSON.stringify(clients).includes(made.client_secret), 'never the secret');
      const table = await run(['oauth-clients', 'list']);
      t.match(
        table.stdout,
        /^CLIENT ID +NAME +TYPE +PLAN +CREATED +STATUS +REDIRECT URIS\ncli_\w+ +Web +confidential +standard +\S+ +active +https:\/\/app\.example\.com\/cb\n$/,
      );

      const refused = await run(['oauth-clients', 'revoke', made.client_id]);
      t.equal(refused.code, 2, 'not without --yes');
      const revoked = await json(['oauth-clients', 'revoke', made.client_id, '--yes']);
      t.match(revoked, { client_id: made.client_id, alreadyRevoked: false, grantsRevoked: 1 });
      // The grant ends with it: the gateways are told to refuse the access tokens it issued.
      const notice = await h.waitForNotice((n) => n.kind === 'oauth_grant_revoked' && n.userId === owner.id);
      t.ok(notice.tokensExpireBy, 'the notice says until when its access tokens would have lived');
      const ev = await h.waitForEvent(
        (e) =>
          e.type === 'system.config_changed' && e.resourceId === made.client_id && !!e.changes?.revokedAt,
      );
      t.equal(ev.metadata.source, 'cli');
      const after = await token();
      t.equal(after.statusCode, 401);
      t.match(JSON.parse(after.body), { error: 'invalid_client' }, 'after: refused');
      t.match(await json(['oauth-clients', 'revoke', made.client_id, '--yes']), { alreadyRevoked: true });
      t.same((await json(['oauth-clients', 'list', '--active'])).clients, []);
      t.equal((await run(['oauth-clients', 'revoke', 'cli_unknown', '--yes'])).code, 1);
    },
  );

  await t.test(
    'on a terminal: a destructive command asks; colour unless NO_COLOR',
    { skip: !SCRIPT && 'no `script`' },
    async (t) => {
      const key = await json('api-keys create --owner root@example.com --name tty --scopes admin'.split(' '));
      const no = await onTerminal(h.cliEnv, ['api-keys', 'revoke', key.id], 'n');
      t.match(no.screen, `API key ${key.id} will be revoked for good. Continue? [y/N]`);
      t.equal(no.code, 1, 'answered no: cancelled');
      t.match(no.screen, /cancelled: nothing was changed/);
      t.match(
        await callRpc(h.nc, h.names.rpc.resolveApiKey, { key: key.key }, callerOf('resolveApiKey')),
        { valid: true },
        'the key works',
      );
      const yes = await onTerminal(h.cliEnv, ['api-keys', 'revoke', key.id], 'y');
      t.equal(yes.code, 0, yes.screen);
      t.match(yes.screen, `revoked ${key.id}`);
      t.match(await callRpc(h.nc, h.names.rpc.resolveApiKey, { key: key.key }, callerOf('resolveApiKey')), {
        valid: false,
      });

      const coloured = await onTerminal(h.cliEnv, ['groups', 'list']);
      t.ok(coloured.screen.includes(`${ESC}1mID`), 'a bold header on a terminal');
      const plain = await onTerminal({ ...h.cliEnv, NO_COLOR: '1' }, ['groups', 'list']);
      t.equal(plain.code, 0);
      t.notOk(plain.screen.includes(`${ESC}1m`), 'none under NO_COLOR');
    },
  );

  await t.test('destructive commands: refused without a terminal unless --yes', async (t) => {
    for (const args of [
      ['users', 'deactivate', 'ada@example.com'],
      ['api-keys', 'revoke', boot.keyId],
      ['settings', 'ip-allowlist', 'clear'],
    ]) {
      const r = await run(args);
      t.equal(r.code, 2, `${args.join(' ')}: exit 2`);
      t.match(r.stderr, /refusing without confirmation \(no terminal to ask on\); add --yes/);
    }
    t.match(await json(['users', 'show', 'ada@example.com']), { status: 'active' }, 'nothing was done');
    t.match(
      await callRpc(h.nc, h.names.rpc.resolveApiKey, { key: boot.key }, callerOf('resolveApiKey')),
      { valid: true },
      'the key works',
    );
    const done = await json(['users', 'deactivate', 'ada@example.com', '--yes']);
    t.match(done, { id: ada.id, status: 'inactive' });
    t.match(await json(['users', 'show', ada.id]), { status: 'inactive' });
  });
});
