import type { DeadLetterReplies, DeadLetterRequest } from '@support-desk/contracts';
import { callRpc, type NatsConnection } from '@support-desk/platform';
import type { Deps } from '../use-cases/deps.js';
import { UsageError } from './args.js';
import { type Command, oneOf } from './command.js';

/** The services that keep dead letters (their consumers'), and answer for them over NATS. */
const SERVICES = ['audit', 'requests', 'webhooks'] as const;

const ask = async <K extends DeadLetterRequest['op']>(
  deps: Deps,
  nc: NatsConnection | null,
  service: unknown,
  request: Extract<DeadLetterRequest, { op: K }>,
): Promise<DeadLetterReplies[K]> => {
  if (!nc) throw new Error('NATS is unavailable: dead letters are asked of the service that keeps them');
  const name = oneOf(service ?? 'audit', SERVICES, 'service')!;
  try {
    return await callRpc(nc, deps.names.deadLetters(name), request, 10_000);
  } catch (err) {
    throw new Error(`the ${name} service did not answer (${(err as Error).message}); is it running?`);
  }
};

const serviceOption = { service: { type: 'string' } } as const;

/** Messages a service's consumers could not take: what they were, and another try once fixed. */
export const deadLetterCommands: Record<string, Command> = {
  'dead-letters list': {
    usage: `dead-letters list [--service ${SERVICES.join('|')}] [--limit N]`,
    options: { ...serviceOption, limit: { type: 'string' } },
    async run(deps, _ctx, v, _pos, nc) {
      const limit = v.limit === undefined ? 100 : Number(v.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new UsageError('--limit must be an integer from 1 to 1000');
      const r = await ask(deps, nc, v.service, { op: 'list', limit });
      const lines = r.deadLetters.map(
        (d) => `${d.id}  ${d.failedAt}  ${d.subject}  (${d.deliveryCount}×)  ${d.reason}`,
      );
      return { json: r, text: [`${r.total} dead letter(s)`, ...lines].join('\n') };
    },
  },
  'dead-letters show': {
    usage: `dead-letters show ID [--service ${SERVICES.join('|')}]`,
    options: serviceOption,
    positionals: 1,
    async run(deps, _ctx, v, pos, nc) {
      const r = await ask(deps, nc, v.service, { op: 'show', id: pos[0] ?? '' });
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
    usage: `dead-letters replay (ID,... | --all) [--service ${SERVICES.join('|')}]`,
    options: { ...serviceOption, all: { type: 'boolean' } },
    positionals: 1,
    async run(deps, _ctx, v, pos, nc) {
      const ids = (pos[0] ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const all = v.all === true;
      if (all === ids.length > 0)
        throw new UsageError('name the dead letters to replay, or --all (not both)');
      const r = await ask(deps, nc, v.service, { op: 'replay', ids, all });
      const lines = [`${r.replayed.length} replayed, ${r.failed.length} failed again`];
      for (const f of r.failed) lines.push(`${f.id}: ${f.reason}`);
      return { json: r, text: lines.join('\n') };
    },
  },
};
