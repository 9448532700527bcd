import type { DeadLetterReplies, DeadLetterRequest, DeadLetterSummary } from '@support-desk/contracts';
import type { Deps } from '@support-desk/identity/admin';
import { callRpc } from '@support-desk/platform/messaging';
import { UsageError } from '../args.js';
import { type CliNats, oneOf, type Run, when } from '../command.js';
import { deadLetterCommands, SERVICES } from '../commands/dead-letters.js';
import { listRun } from './list.js';

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

export const runs: Record<string, Run> = {
  'dead-letters list': listRun<DeadLetterSummary>(deadLetterCommands['dead-letters list'], {
    key: 'deadLetters',
    columns: ['id', 'failed', 'subject', 'deliveries', 'reason'],
    row: (d) => [d.id, when(d.failedAt), d.subject, String(d.deliveryCount), d.reason],
    async fetch(deps, _ctx, v, _pos, nats, { page, limit }) {
      const r = await ask(deps, nats, v.service, { op: 'list', limit, skip: (page - 1) * limit });
      return { items: r.deadLetters, total: r.total };
    },
  }),
  async 'dead-letters show'(deps, _ctx, v, pos, nats) {
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
  async 'dead-letters replay'(deps, _ctx, v, pos, nats) {
    const ids = (pos[0] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const all = v.all === true;
    if (all === ids.length > 0) throw new UsageError('name the dead letters to replay, or --all (not both)');
    const r = await ask(deps, nats, v.service, { op: 'replay', ids, all });
    const lines = [`${r.replayed.length} replayed, ${r.failed.length} failed again`];
    for (const f of r.failed) lines.push(`${f.id}: ${f.reason}`);
    return { json: r, text: lines.join('\n') };
  },
};
