import type { CommandSpec } from '../command.js';

/** Global settings, the OAuth signing keys and the first admin (run/settings.ts). */
export const settingsCommands: Record<string, CommandSpec> = {
  'settings ip-allowlist set': {
    description: 'replace the global allowlist: API keys are refused from any other address',
    options: {},
    args: [{ name: 'CIDRS', description: 'addresses or ranges, comma-separated', required: true }],
    examples: ['settings ip-allowlist set 10.0.0.0/8,192.0.2.7'],
  },
  'settings ip-allowlist clear': {
    description: 'empty the global allowlist: API keys may be used from any address',
    options: {},
    examples: ['settings ip-allowlist clear --yes'],
    confirm: () => 'The global IP allowlist will be emptied: API keys will be accepted from any address',
  },
  'settings ip-allowlist show': {
    description: 'print the global allowlist',
    options: {},
    examples: ['settings ip-allowlist show'],
  },
  'oauth-keys rotate': {
    description:
      'start signing tokens with a new key; the previous keys stay in the JWKS until tokens signed with them expire',
    options: {},
    examples: ['oauth-keys rotate'],
  },
  bootstrap: {
    description: 'create the first admin and an admin API key (printed once)',
    options: {
      email: { type: 'string', value: 'EMAIL', description: "the admin's email" },
      name: { type: 'string', value: 'NAME', description: "the admin's display name" },
      'if-none': { type: 'boolean', description: 'do nothing (exit 0) when an admin exists already' },
      'expires-in': {
        type: 'string',
        value: 'DURATION',
        description: "the key's lifetime (30m, 1h, 2d…); without it the key never expires",
      },
    },
    examples: [
      'bootstrap --email admin@example.com --name Admin --if-none --json',
      'bootstrap --email admin@example.com --name Admin --if-none --expires-in 1h',
    ],
  },
};
