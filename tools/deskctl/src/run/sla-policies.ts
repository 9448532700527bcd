import { readFile } from 'node:fs/promises';
import { PRIORITIES, type SlaPolicy } from '@support-desk/contracts';
import { UsageError } from '../args.js';
import { type Run, when } from '../command.js';
import { requestsAdminCommands } from '../commands/requests-admin.js';
import { pageOf, listRun } from './list.js';
import { askRequests } from './requests-admin.js';

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** `critical=15/60,high=60/240,…`: first-response/resolution business minutes per priority. */
function targetsFrom(text: string) {
  const targets: Record<string, { firstResponseMinutes: number; resolutionMinutes: number }> = {};
  for (const entry of list(text)) {
    const m = /^([a-z]+)=(\d+)\/(\d+)$/.exec(entry);
    if (!m || !(PRIORITIES as readonly string[]).includes(m[1]!))
      throw new UsageError(
        `--targets: "${entry}" is not PRIORITY=FIRST/RESOLUTION (priorities: ${PRIORITIES.join(', ')})`,
      );
    targets[m[1]!] = { firstResponseMinutes: Number(m[2]), resolutionMinutes: Number(m[3]) };
  }
  return targets;
}

async function fileBody(path: unknown): Promise<Record<string, unknown>> {
  if (typeof path !== 'string') return {};
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--file: ${(err as Error).message}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--file ${path}: not JSON (${(err as Error).message})`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new UsageError(`--file ${path}: must hold a JSON object (the policy)`);
  return body as Record<string, unknown>;
}

/**
 * The body of a create or an update: the file's object, then each flag given on top of it (a
 * flag replaces that field whole; `--time-zone` sets the calendar's zone, keeping its hours).
 * The service checks the result as the API checks a body, and says what is wrong.
 */
async function policyBody(v: Record<string, unknown>): Promise<Record<string, unknown>> {
  const body = await fileBody(v.file);
  const str = (name: string) => (typeof v[name] === 'string' ? (v[name] as string) : undefined);
  if (str('name') !== undefined) body.name = str('name');
  if (str('description') !== undefined) body.description = str('description');
  if (str('position') !== undefined) {
    if (!/^\d{1,6}$/.test(str('position')!)) throw new UsageError('--position must be an integer, 0 or more');
    body.position = Number(str('position'));
  }
  if (str('targets') !== undefined) body.targets = targetsFrom(str('targets')!);
  if (str('pause-statuses') !== undefined) body.pauseStatuses = list(str('pause-statuses')!);
  const match = { ...((body.match as Record<string, unknown> | undefined) ?? {}) };
  if (str('priorities') !== undefined) match.priorities = list(str('priorities')!);
  if (str('groups') !== undefined) match.groups = list(str('groups')!);
  if (str('vip') !== undefined) {
    if (!['yes', 'no'].includes(str('vip')!)) throw new UsageError('--vip must be yes or no');
    match.vip = str('vip') === 'yes';
  }
  if (Object.keys(match).length > 0 || body.match !== undefined) body.match = match;
  if (str('time-zone') !== undefined) {
    const calendar = (body.calendar as Record<string, unknown> | undefined) ?? {
      hours: [
        {
          days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
          from: '00:00',
          to: '24:00',
        },
      ],
      holidays: [],
    };
    body.calendar = { ...calendar, timeZone: str('time-zone') };
  }
  return body;
}

const minutes = (p: SlaPolicy) =>
  PRIORITIES.map((k) => `${k}=${p.targets[k].firstResponseMinutes}/${p.targets[k].resolutionMinutes}`).join(
    ',',
  );
const matchText = (p: SlaPolicy) => {
  const m = p.match;
  const parts = [
    ...(m.priorities ? [`priority ${m.priorities.join('|')}`] : []),
    ...(m.groups ? [`group ${m.groups.join('|')}`] : []),
    ...(m.vip !== undefined ? [m.vip ? 'VIP' : 'not VIP'] : []),
  ];
  return parts.length ? parts.join(' and ') : 'every request';
};

function describe(p: SlaPolicy): string {
  const hours = p.calendar.hours.map((h) => `${h.days.join(',')} ${h.from}-${h.to}`).join('; ');
  return [
    `${p.id}  ${p.name}  (position ${p.position})`,
    `description: ${p.description || '-'}`,
    `match:       ${matchText(p)}`,
    `targets:     ${minutes(p)}  (first response/resolution, business minutes)`,
    `calendar:    ${p.calendar.timeZone}: ${hours}${p.calendar.holidays.length ? `; holidays ${p.calendar.holidays.join(', ')}` : ''}`,
    `pauses on:   ${p.pauseStatuses.join(', ') || '-'}`,
    `created:     ${when(p.createdAt)}   updated: ${when(p.updatedAt)}`,
  ].join('\n');
}

export const runs: Record<string, Run> = {
  'sla-policies list': listRun<SlaPolicy>(requestsAdminCommands['sla-policies list']!, {
    key: 'policies',
    columns: ['id', 'name', 'position', 'match', 'targets', 'time zone', 'pauses on'],
    row: (p) => [
      p.id,
      p.name,
      String(p.position),
      matchText(p),
      minutes(p),
      p.calendar.timeZone,
      p.pauseStatuses.join(','),
    ],
    // At most a few dozen policies, answered whole.
    async fetch(deps, ctx, _v, _pos, nats, request) {
      return pageOf((await askRequests(deps, nats, ctx, 'slaPolicies.list', {})).policies, request);
    },
  }),
  async 'sla-policies show'(deps, ctx, _v, pos, nats) {
    const { policy } = await askRequests(deps, nats, ctx, 'slaPolicies.get', { id: pos[0]! });
    return { json: policy, text: describe(policy) };
  },
  async 'sla-policies create'(deps, ctx, v, _pos, nats) {
    const body = await policyBody(v);
    if (body.name === undefined) throw new UsageError('give --name (or a "name" in --file)');
    if (body.targets === undefined) throw new UsageError('give --targets (or "targets" in --file)');
    const { policy } = await askRequests(deps, nats, ctx, 'slaPolicies.create', body as never);
    return { json: policy, text: `created SLA policy ${policy.id}\n${describe(policy)}` };
  },
  async 'sla-policies update'(deps, ctx, v, pos, nats) {
    const body = await policyBody(v);
    if (Object.keys(body).length === 0)
      throw new UsageError('nothing to change: give --file or a field flag (--name, --targets, …)');
    const { policy } = await askRequests(deps, nats, ctx, 'slaPolicies.update', {
      ...body,
      id: pos[0]!,
    } as never);
    return { json: policy, text: `updated SLA policy ${policy.id}\n${describe(policy)}` };
  },
  async 'sla-policies delete'(deps, ctx, _v, pos, nats) {
    const r = await askRequests(deps, nats, ctx, 'slaPolicies.delete', { id: pos[0]! });
    return { json: { id: r.id, deleted: r.deleted }, text: `deleted SLA policy ${r.id}` };
  },
};
