import { type CommandSpec, type Options } from '../command.js';
import { listCommand } from '../list-command.js';

/** The services that keep dead letters (their consumers'), and answer for them over NATS. */
export const SERVICES = ['audit', 'requests', 'webhooks'] as const;

const serviceOption: Options = {
  service: {
    type: 'string',
    value: SERVICES.join('|'),
    description: 'the service whose dead letters these are (default audit)',
  },
};

/** Messages a service's consumers could not take: what they were, and another try once fixed (run/dead-letters.ts). */
export const deadLetterCommands: Record<string, CommandSpec> = {
  'dead-letters list': listCommand({
    description: "messages a service's consumers could not take, newest first",
    options: serviceOption,
    examples: ['dead-letters list', 'dead-letters list --service requests --limit 10 --json'],
    noun: ['dead letter', 'dead letters'],
    defaultLimit: 100,
    maxLimit: 1000,
  }),
  'dead-letters show': {
    description: 'one dead letter: where it came from, why it failed, and its message',
    options: serviceOption,
    args: [{ name: 'ID', description: 'the dead letter', required: true }],
    examples: ['dead-letters show dl_01J... --service requests'],
  },
  'dead-letters replay': {
    description: 'deliver dead letters to their consumer again (once the cause is fixed)',
    options: {
      ...serviceOption,
      all: { type: 'boolean', description: 'replay every dead letter of the service' },
    },
    args: [{ name: 'IDS', description: 'the dead letters to replay (or --all)' }],
    examples: ['dead-letters replay dl_01J...,dl_01K...', 'dead-letters replay --all --service audit'],
  },
};
