import type { Command, CommandSpec, RunModule } from './command.js';
import { credentialCommands } from './commands/credentials.js';
import { deadLetterCommands } from './commands/dead-letters.js';
import { groupsCommands } from './commands/groups.js';
import { idpCommands } from './commands/idp.js';
import { ldapCommands } from './commands/ldap.js';
import { requestsAdminCommands } from './commands/requests-admin.js';
import { settingsCommands } from './commands/settings.js';
import { usersCommands } from './commands/users.js';
import { webhookCommands, webhookLocalCommands } from './commands/webhooks.js';

/*
 * deskctl's command table: every command's help, flags and confirmation (commands/), and where
 * what it runs lives (run/). The table imports nothing heavy, so `--help`, `completion` and usage
 * errors never load identity, the store or NATS; a command's run/ module (with identity's admin
 * entry under it) is imported when that command runs.
 */

/** What `deskctl <group> --help` says a group of commands is for. */
export const GROUPS: Record<string, string> = {
  users: 'users: list, show, create, update, deactivate, set a password, link to an identity provider',
  groups: 'groups and their members',
  'api-keys': 'API keys: create (the value is shown once), list with last use, revoke',
  'oauth-clients': 'OAuth 2.0 clients of the authorization server: create, list, revoke',
  'oauth-keys': 'the OAuth token signing keys',
  settings: 'global settings',
  'settings ip-allowlist': 'the global IP allowlist of API keys',
  idp: 'identity provider connections (SCIM and LDAP)',
  'dead-letters': "messages a service's consumers could not take",
  'sla-policies': 'SLA policies (asked of the requests service): list, show, create, update, delete',
  requests: 'requests in the trash (asked of the requests service): list the deleted ones, restore one',
  jobs: 'bulk jobs (asked of the requests service): progress and per-item results',
  webhooks:
    'webhook subscriptions (asked of the webhooks service): create, list, update, delete, secrets, pings, deliveries; listen and trigger for a local receiver',
};

/** One area's commands, each run by its entry of `load()`'s `runs`. */
const area = (load: () => Promise<RunModule>, specs: Record<string, CommandSpec>) =>
  Object.fromEntries(
    Object.entries(specs).map(([name, spec]): [string, Command] => [
      name,
      {
        ...spec,
        async load() {
          const run = (await load()).runs[name];
          if (!run) throw new Error(`deskctl: "${name}" has nothing to run`);
          return run;
        },
      },
    ]),
  );

/** The commands of a table whose names start with one of `prefixes`. */
const pick = (specs: Record<string, CommandSpec>, ...prefixes: string[]) =>
  Object.fromEntries(Object.entries(specs).filter(([name]) => prefixes.some((p) => name.startsWith(p))));

export const COMMANDS: Record<string, Command> = {
  ...area(() => import('./run/users.js'), usersCommands),
  ...area(() => import('./run/groups.js'), groupsCommands),
  ...area(() => import('./run/dead-letters.js'), deadLetterCommands),
  ...area(() => import('./run/idp.js'), idpCommands),
  ...area(() => import('./run/ldap.js'), ldapCommands),
  ...area(() => import('./run/credentials.js'), credentialCommands),
  ...area(() => import('./run/webhooks.js'), webhookCommands),
  ...area(() => import('./run/webhooks-listen.js'), webhookLocalCommands),
  ...area(() => import('./run/settings.js'), settingsCommands),
  ...area(() => import('./run/sla-policies.js'), pick(requestsAdminCommands, 'sla-policies ')),
  ...area(() => import('./run/trash.js'), pick(requestsAdminCommands, 'requests ', 'jobs ')),
};
