import { type CommandSpec, IF_NOT_EXISTS, type Options } from '../command.js';
import { listCommand } from '../list-command.js';

const ID_ARG = [{ name: 'ID', description: 'the subscription (whk_…)', required: true }];

const SUBSCRIPTION_OPTIONS: Options = {
  url: {
    type: 'string',
    value: 'URL',
    description: 'where deliveries are POSTed (https; http only where the operator allows it)',
  },
  events: {
    type: 'string',
    value: 'PATTERNS',
    description: 'event types, families or *, comma-separated (request.created, request.*, *)',
  },
  description: { type: 'string', value: 'TEXT', description: 'what it is for (at most 500 characters)' },
};

/**
 * `deskctl webhooks …`: the webhooks service's subscriptions, through its admin RPC (run/webhooks.ts).
 */
export const webhookCommands: Record<string, CommandSpec> = {
  'webhooks list': listCommand({
    description: 'list the webhook subscriptions, newest first',
    examples: ['webhooks list', 'webhooks list --limit 100 --json', 'webhooks list --all'],
    noun: ['webhook subscription', 'webhook subscriptions'],
  }),
  'webhooks show': {
    description: 'one subscription (never its secret)',
    options: {},
    args: ID_ARG,
    examples: ['webhooks show whk_01J...'],
  },
  'webhooks create': {
    description: 'subscribe a URL to events; prints the signing secret once',
    options: {
      ...SUBSCRIPTION_OPTIONS,
      inactive: { type: 'boolean', description: 'create it disabled (events are held until enabled)' },
      ...IF_NOT_EXISTS,
    },
    examples: [
      'webhooks create --url https://hooks.example.com/desk --events "request.*,user.created"',
      'webhooks create --url https://hooks.example.com/all --events "*" --description "audit mirror" --if-not-exists',
    ],
  },
  'webhooks update': {
    description: "change a subscription's URL, events, description, or enable/disable it",
    options: {
      ...SUBSCRIPTION_OPTIONS,
      enable: { type: 'boolean', description: 'enable it: deliveries held while it was disabled resume' },
      disable: { type: 'boolean', description: 'disable it: events are recorded, nothing is sent' },
    },
    args: ID_ARG,
    examples: ['webhooks update whk_01J... --events "request.*"', 'webhooks update whk_01J... --enable'],
  },
  'webhooks delete': {
    description: 'delete a subscription: nothing more is sent to it, pending deliveries are dropped',
    options: {},
    args: ID_ARG,
    examples: ['webhooks delete whk_01J... --yes'],
    confirm: (_v, pos) => `Webhook subscription ${pos[0]} will be deleted and its pending deliveries dropped`,
  },
  'webhooks rotate-secret': {
    description:
      'a new signing secret, printed once; the previous one keeps signing beside it for the overlap',
    options: {},
    args: ID_ARG,
    examples: ['webhooks rotate-secret whk_01J...'],
  },
  'webhooks ping': {
    description: 'send a signed webhook.ping delivery to the subscription now',
    options: {},
    args: ID_ARG,
    examples: ['webhooks ping whk_01J...', 'webhooks deliveries whk_01J... --event-type webhook.ping'],
  },
  'webhooks deliveries': listCommand({
    description:
      "a subscription's deliveries, newest first: status, attempts, last HTTP status or error, next retry",
    options: {
      status: {
        type: 'string',
        value: 'STATUSES',
        description: 'pending, succeeded and/or failed, comma-separated',
      },
      'event-type': {
        type: 'string',
        value: 'TYPES',
        description: 'event types, comma-separated (webhook.ping for pings)',
      },
    },
    args: ID_ARG,
    examples: ['webhooks deliveries whk_01J...', 'webhooks deliveries whk_01J... --status failed --json'],
    noun: ['delivery', 'deliveries'],
  }),
  'webhooks replay': {
    description: 'send a delivery again, due now, with the same webhook-id',
    options: {},
    args: [...ID_ARG, { name: 'DELIVERY', description: 'the delivery (dlv_…)', required: true }],
    examples: ['webhooks replay whk_01J... dlv_01J...'],
  },
};

/**
 * `deskctl webhooks listen|trigger`: developing a receiver locally (run/webhooks-listen.ts), as
 * `stripe listen --forward-to` and `stripe trigger` do it.
 */
export const webhookLocalCommands: Record<string, CommandSpec> = {
  'webhooks listen': {
    description:
      'receive deliveries on a temporary subscription, verify their signatures and forward each to a local receiver; one line per delivery; ^C deletes the subscription',
    options: {
      'forward-to': {
        type: 'string',
        value: 'URL',
        description: 'where each verified delivery is sent on, with its headers (http://localhost:3000/hook)',
      },
      events: {
        type: 'string',
        value: 'PATTERNS',
        description: 'event types, families or *, comma-separated (default: *)',
      },
      port: {
        type: 'string',
        value: 'PORT',
        description: 'the loopback port deskctl receives deliveries on (default: any free port)',
      },
    },
    examples: [
      'webhooks listen --forward-to http://localhost:3000/hooks',
      'webhooks listen --forward-to http://localhost:3000/hooks --events "request.*,user.created"',
      'webhooks listen --forward-to http://localhost:3000/hooks --json   # one JSON line per delivery',
    ],
  },
  'webhooks trigger': {
    description:
      'send a test event of a type (test: true in its payload) to every active subscription that takes it, or to --webhook only',
    options: {
      webhook: {
        type: 'string',
        value: 'ID',
        description: 'only this subscription (whk_…; it must take the type)',
      },
    },
    args: [
      {
        name: 'TYPE',
        description: 'an event type of the catalogue (request.created, user.updated…)',
        required: true,
      },
    ],
    examples: ['webhooks trigger request.created', 'webhooks trigger user.created --webhook whk_01J...'],
  },
};
