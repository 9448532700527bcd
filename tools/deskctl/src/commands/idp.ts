import { ROLES } from '@support-desk/contracts/vocabulary';
import type { CommandSpec, Options } from '../command.js';
import { listCommand } from '../list-command.js';
import { LDAP_OPTIONS } from './ldap.js';

/**
 * The options of `idp create` and `idp update`: shared, so the LDAP sync's settings (its own
 * flags, added beside these) reach both.
 */
const IDP_SETTINGS_OPTIONS: Options = {
  'default-role': {
    type: 'string',
    value: ROLES.join('|'),
    description: 'role of a provisioned user no group rule matches (default viewer)',
  },
  'group-role': {
    type: 'string',
    multiple: true,
    value: 'GROUP=ROLE',
    description:
      "members of the group GROUP get ROLE: its external id (SCIM externalId, the LDAP entry's id), its grp_ id or (LDAP) its DN, never its display name",
  },
  ...LDAP_OPTIONS,
};

const NAME_ARG = [{ name: 'NAME', description: 'the identity provider', required: true }];

/** Identity provider connections (SCIM and LDAP): see the README's "Identity providers" (run/idp.ts). */
export const idpCommands: Record<string, CommandSpec> = {
  'idp create': {
    description:
      'connect an identity provider: SCIM (pushed by the provider; prints the SCIM URL and its token, once) or LDAP (pulled)',
    options: {
      kind: {
        type: 'string',
        value: 'scim|ldap',
        description: 'how users arrive: SCIM pushes, LDAP is pulled',
      },
      ...IDP_SETTINGS_OPTIONS,
    },
    args: NAME_ARG,
    examples: [
      'idp create okta --kind scim --default-role viewer --group-role "00g1a2b3c4=agent"',
      'idp create corp --kind ldap --url ldap://ldap.example.com:389 --bind-dn cn=reader,dc=example,dc=com --password-env LDAP_PASSWORD --base-dn dc=example,dc=com',
    ],
  },
  'idp update': {
    description: 'change a connection: its roles, or its LDAP settings (only the flags given change)',
    options: { ...IDP_SETTINGS_OPTIONS },
    args: NAME_ARG,
    examples: ['idp update okta --default-role agent', 'idp update corp --interval 1h'],
  },
  'idp list': listCommand({
    description: 'list the identity provider connections',
    examples: ['idp list', 'idp list --json'],
    noun: ['identity provider', 'identity providers'],
  }),
  'idp show': {
    description: 'show one connection, its settings and its last sync',
    options: {},
    args: NAME_ARG,
    examples: ['idp show okta'],
  },
  'idp rotate-token': {
    description: 'issue a new SCIM token (printed once); the previous one stops working at once',
    options: {},
    args: NAME_ARG,
    examples: ['idp rotate-token okta --yes'],
    confirm: (_v, pos) => `The SCIM token of ${pos[0]} will stop working at once`,
  },
  'idp disable': {
    description: 'refuse its token and stop syncing it; its users stay as they are',
    options: {},
    args: NAME_ARG,
    examples: ['idp disable okta'],
  },
  'idp enable': {
    description: 'accept its token and sync it again',
    options: {},
    args: NAME_ARG,
    examples: ['idp enable okta'],
  },
  'idp delete': {
    description:
      'delete a connection: its active users are deactivated, its users and groups become managed through /v1',
    options: {},
    args: NAME_ARG,
    examples: ['idp delete okta --yes'],
    confirm: (_v, pos) => `Identity provider ${pos[0]} will be deleted and its active users deactivated`,
  },
};
