import type { CommandSpec, Options } from '../command.js';

/**
 * The LDAP side of `deskctl idp`: the directory settings' flags (given to `idp create` and
 * `idp update`), and `idp sync NAME`, one sync now (the same run the schedule makes; run/ldap.ts).
 */
export const LDAP_OPTIONS: Options = {
  url: {
    type: 'string',
    value: 'ldaps://HOST:PORT',
    description:
      'the directory: ldaps://, or ldap:// with --start-tls (ldap:// alone only to a loopback host)',
  },
  'start-tls': { type: 'boolean', description: 'upgrade an ldap:// connection with StartTLS before binding' },
  'bind-dn': { type: 'string', value: 'DN', description: 'the DN deskctl binds as to read the directory' },
  'password-env': {
    type: 'string',
    value: 'VAR',
    description: 'environment variable holding the bind password (named LDAP_BIND_PASSWORD…)',
  },
  'password-file': {
    type: 'string',
    value: 'PATH',
    description: 'file holding the bind password, inside LDAP_SECRETS_DIR (/run/secrets)',
  },
  'base-dn': { type: 'string', value: 'DN', description: 'where users and groups are searched' },
  'user-filter': { type: 'string', value: 'FILTER', description: 'LDAP filter of the users to sync' },
  'group-filter': { type: 'string', value: 'FILTER', description: 'LDAP filter of the groups to sync' },
  attribute: {
    type: 'string',
    multiple: true,
    value: 'KEY=ATTR',
    description: 'which directory attribute gives a user field (email, name, ...)',
  },
  metadata: {
    type: 'string',
    multiple: true,
    value: 'KEY=ATTR',
    description: 'attribute copied into user metadata',
  },
  'inactive-value': {
    type: 'string',
    multiple: true,
    value: 'V',
    description: 'a status attribute value meaning the account is inactive',
  },
  interval: { type: 'string', value: '15m|1h|0', description: 'how often the sync runs (0: on demand only)' },
  'max-deactivate-percent': {
    type: 'string',
    value: 'P',
    description: 'stop a run that would deactivate more than this share of the synced users',
  },
  'page-size': { type: 'string', value: 'N', description: 'LDAP paged-search page size' },
  'timeout-ms': { type: 'string', value: 'N', description: 'timeout of each directory operation' },
};

export const ldapCommands: Record<string, CommandSpec> = {
  'idp sync': {
    description:
      'sync an LDAP connection now (the same run the schedule makes); exit 1 when it stopped or failed',
    options: { 'max-deactivate-percent': LDAP_OPTIONS['max-deactivate-percent'] },
    args: [{ name: 'NAME', description: 'the identity provider', required: true }],
    examples: ['idp sync corp', 'idp sync corp --max-deactivate-percent 50'],
  },
};
