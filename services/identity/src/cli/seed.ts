import { Type } from '@sinclair/typebox';
import { configSchema, loadConfig } from '@support-desk/platform';
import { positiveInt, UsageError } from './args.js';
import type { CommandResult, CommandSession } from './commands.js';
import { MAX_REQUESTS, type SeedResult, seedDemo } from './seed-run.js';
import { DEFAULT_RUN_ID, RUN_ID_PATTERN } from './seed-plan.js';
import type { Deps, EventContext } from '../use-cases/deps.js';

/** `--url` defaults to `SD_URL`, else the gateway `npm start` runs. */
const seedConfigSchema = configSchema({
  SD_URL: Type.String({ pattern: '^https?://', default: 'http://127.0.0.1:8080' }),
});

export const DEFAULT_REQUESTS = 50;

export const seedCommand = {
  usage: `seed --demo [--requests N (default ${DEFAULT_REQUESTS})] [--run-id ID (default ${DEFAULT_RUN_ID})] [--url GATEWAY_URL (default $SD_URL or http://127.0.0.1:8080)]`,
  options: {
    demo: { type: 'boolean' as const },
    requests: { type: 'string' as const },
    'run-id': { type: 'string' as const },
    url: { type: 'string' as const },
  },
  async run(
    deps: Deps,
    ctx: EventContext,
    v: Record<string, unknown>,
    _positionals: string[],
    session: CommandSession,
  ): Promise<CommandResult> {
    if (v.demo !== true) throw new UsageError('seed needs --demo (the only data set there is)');
    const requests = positiveInt(v.requests, 'requests') ?? DEFAULT_REQUESTS;
    if (requests > MAX_REQUESTS) throw new UsageError(`--requests must be at most ${MAX_REQUESTS}`);
    const runId = typeof v['run-id'] === 'string' ? v['run-id'] : DEFAULT_RUN_ID;
    if (!RUN_ID_PATTERN.test(runId))
      throw new UsageError('--run-id must be 1-32 characters: lower-case letters, digits and "-"');
    const url = typeof v.url === 'string' ? v.url : loadConfig(seedConfigSchema).SD_URL;
    let origin: string;
    try {
      const parsed = new URL(url);
      if (!/^https?:$/.test(parsed.protocol)) throw new Error('not http');
      origin = parsed.origin;
    } catch {
      throw new UsageError(`--url must be an http(s) URL (got "${url}")`);
    }
    const result = await seedDemo(deps, ctx, { runId, requests, url: origin, conn: session.conn });
    return { json: result, text: describe(result, origin) };
  },
};

function describe(r: SeedResult, origin: string): string {
  const t = r.totals;
  if (r.status === 'already_seeded') {
    return (
      `demo run "${r.runId}" was already seeded (${r.finishedAt}): nothing created.\n` +
      `It holds ${t.users} users, ${t.groups} groups and ${t.requests} requests tagged ${r.tag}; use another --run-id for a new set.`
    );
  }
  const c = r.created;
  const counts = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  const admin = r.users.find((x) => x.role === 'admin');
  return [
    `demo run "${r.runId}" ${r.status === 'resumed' ? 'resumed and finished' : 'seeded'} through ${origin} in ${r.seconds.toFixed(1)} s`,
    `created now: ${counts(c)}`,
    `run totals: ${t.users} users (${counts(t.byRole)}; ${t.vip} VIP), ${t.groups} groups (${r.groups.map((g) => g.name).join(', ')})`,
    `            ${t.requests} requests tagged ${r.tag}: ${counts(t.byStatus)}`,
    `            priorities: ${counts(t.byPriority)}`,
    `            ${t.comments} comments (${t.internalComments} internal), ${t.attachments} attachments`,
    `seeding API keys: ${r.apiKeys.created} created and ${r.apiKeys.revoked} revoked (${r.apiCalls} API calls)`,
    admin
      ? `to use the data, create a key for a seeded admin:\n  npx deskctl api-keys create --owner ${admin.email} --name demo --scopes admin`
      : '',
  ]
    .filter(Boolean)
    .join('\n');
}
