import type { DeadLetterReplies, DeadLetterRequest, DeadLetterSummary } from '@support-desk/contracts';
import { callRpc } from '@support-desk/platform';
import type { Deps } from '../use-cases/deps.js';
import { UsageError } from './args.js';
import { type CliNats, type Command, oneOf, type Options, when } from './command.js';
import { listCommand } from './list-command.js';

/** The services that keep dead letters (their consumers'), and answer for them over NATS. */
const SERVICES = ['audit', 'requests', 'webhooks'] as const;

const ask = async <K extends DeadLetterRequest['op']>(
  deps: Deps,
  nats: CliNats | null,
  service: unknown,
  request: Extract<DeadLetterRequest, { op: K }>,
): Promise<DeadLetterReplies[K]> => {
  if (!nats) throw new Error('NATS is unavailable: dead letters are asked of the service that keeps them');
  const name = oneOf(service ?? 'audit', SERVICES, 'service')!;
  try {
    return await callRpc(nats.nc, deps.names.deadLetters(name), request, {
      signer: nats.signer,
      timeoutMs: 10_000,
    });
  } catch (err) {
    throw new Error(`the ${name} service did not answer (${(err as Error).message}); is it running?`);
  }
};

const serviceOption: Options = {
  service: {
    type: 'string',
    value: SERVICES.join('|'),
    description: 'the service whose dead letters these are (default audit)',
  },
};

/** Messages a service's consumers could not take: what they were, and another try once fixed. */
export const deadLetterCommands: Record<string, Command> = {
  'dead-letters list': listCommand<DeadLetterSummary>({
    description: "messages a service's consumers could not take, newest first",
    options: serviceOption,
    examples: ['dead-letters list', 'dead-letters list --service requests --limit 10 --json'],
    key: 'deadLetters',
    noun: ['dead letter', 'dead letters'],
    defaultLimit: 100,
    maxLimit: 1000,
    columns: ['id', 'failed', 'subject', 'deliveries', 'reason'],
    row: (d) => [d.id, when(d.failedAt), d.subject, String(d.deliveryCount), d.reason],
    async fetch(deps, _ctx, v, _pos, nats, { page, limit }) {
      const r = await ask(deps, nats, v.service, { op: 'list', limit, skip: (page - 1) * limit });
      return { items: r.deadLetters, total: r.total };
    },
  }),
  'dead-letters show': {
    description: 'one dead letter: where it came from, why it failed, and its message',
    options: serviceOption,
    args: [{ name: 'ID', description: 'the dead letter', required: true }],
    examples: ['dead-letters show dl_01J... --service requests'],
    async run(deps, _ctx, v, pos, nats) {
      const r = await ask(deps, nats, v.service, { op: 'show', id: pos[0] ?? '' });
      if (!r.found) throw new Error(`no dead letter ${pos[0]}`);
      const d = r.deadLetter;
      return {
        json: d,
        text: [
          `${d.id}: ${d.subject}, stream sequence ${d.streamSequence}, consumer ${d.consumer}`,
          `failed ${d.failedAt} after ${d.deliveryCount} deliveries: ${d.reason}`,
          d.data,
        ].join('\n'),
      };
    },
  },
  'dead-letters replay': {
    description: 'deliver dead letters to their consumer again (once the cause is fixed)',
    options: {
      ...serviceOption,
      all: { type: 'boolean', description: 'replay every dead letter of the service' },
    },
    args: [{ name: 'IDS', description: 'the dead letters to replay (or --all)' }],
    examples: ['dead-letters replay dl_01J...,dl_01K...', 'dead-letters replay --all --service audit'],
    async run(deps, _ctx, v, pos, nats) {
      const ids = (pos[0] ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const all = v.all === true;
      if (all === ids.length > 0)
        throw new UsageError('name the dead letters to replay, or --all (not both)');
      const r = await ask(deps, nats, v.service, { op: 'replay', ids, all });
      const lines = [`${r.replayed.length} replayed, ${r.failed.length} failed again`];
      for (const f of r.failed) lines.push(`${f.id}: ${f.reason}`);
      return { json: r, text: lines.join('\n') };
    },
  },
};
