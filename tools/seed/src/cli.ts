import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Type } from 'typebox';
import { ConfigError, configSchema, loadConfig } from '@support-desk/platform/core';
import { DeskctlError } from './deskctl.js';
import { DEFAULT_RUN_ID, RUN_ID_PATTERN } from './plan.js';
import { MAX_REQUESTS, type SeedResult, seedDemo } from './run.js';
import { progressReporter } from './progress.js';
import { stateFile } from './state.js';

/**
 * sd-seed: fills a running Support Desk with a realistic demo data set, through its public
 * interfaces only (the operator CLI deskctl and the gateway's API). Exit codes: 0 done, 1 error
 * (message on stderr), 2 usage.
 */
export const DEFAULT_REQUESTS = 50;

const USAGE = `usage: sd-seed --demo [--requests N (default ${DEFAULT_REQUESTS}, at most ${MAX_REQUESTS})] [--run-id ID (default ${DEFAULT_RUN_ID})] [--url GATEWAY_URL] [--json]

Runs deskctl with this environment (MONGO_URL, MONGO_DB, NATS_URL, NATS_NAMESPACE, as for deskctl).`;

const seedConfigSchema = configSchema({
  /** The gateway, when --url is not given. */
  SD_URL: Type.String({ pattern: '^https?://', default: 'http://127.0.0.1:8080' }),
  /** Where runs keep their progress files. */
  SD_SEED_STATE_DIR: Type.String({
    minLength: 1,
    default: fileURLToPath(new URL('../../../../.data/seed', import.meta.url)),
  }),
  // Which deployment deskctl reaches (its own defaults): part of a progress file's name.
  MONGO_URL: Type.String({ default: 'mongodb://127.0.0.1:27027' }),
  MONGO_DB: Type.String({ default: 'identity' }),
  NATS_NAMESPACE: Type.String({ default: 'sd' }),
});

class UsageError extends Error {}

function options(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        demo: { type: 'boolean' },
        requests: { type: 'string' },
        'run-id': { type: 'string' },
        url: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      strict: true,
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function main(argv: string[]): Promise<number> {
  const v = options(argv);
  if (v.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (v.demo !== true) throw new UsageError('--demo is required (the only data set there is)');
  const requests = v.requests === undefined ? DEFAULT_REQUESTS : Number(v.requests);
  if (!Number.isInteger(requests) || requests < 1 || requests > MAX_REQUESTS)
    throw new UsageError(`--requests must be a whole number from 1 to ${MAX_REQUESTS}`);
  const runId = v['run-id'] ?? DEFAULT_RUN_ID;
  if (!RUN_ID_PATTERN.test(runId))
    throw new UsageError('--run-id must be 1-32 characters: lower-case letters, digits and "-"');
  const config = loadConfig(seedConfigSchema);
  const url = v.url ?? config.SD_URL;
  let origin: string;
  try {
    const parsed = new URL(url);
    if (!/^https?:$/.test(parsed.protocol)) throw new Error('not http');
    origin = parsed.origin;
  } catch {
    throw new UsageError(`--url must be an http(s) URL (got "${url}")`);
  }
  const file = stateFile(config.SD_SEED_STATE_DIR, runId, [
    origin,
    config.MONGO_URL,
    config.MONGO_DB,
    config.NATS_NAMESPACE,
  ]);
  const progress = progressReporter();
  let result: SeedResult;
  try {
    result = await seedDemo({
      runId,
      requests,
      url: origin,
      stateFile: file,
      onProgress: (done, total, calls) => progress.update(done, total, calls),
    });
  } finally {
    progress.stop();
  }
  process.stdout.write(v.json ? `${JSON.stringify(result, null, 2)}\n` : `${describe(result, origin)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`sd-seed: ${err.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    const known = err instanceof DeskctlError || err instanceof ConfigError;
    process.stderr.write(
      `sd-seed: error: ${known ? (err as Error).message : ((err as Error)?.message ?? String(err))}\n`,
    );
    process.exit(1);
  },
);

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
      ? `to use the data, create a key for a seeded admin:\n  npm run deskctl -- api-keys create --owner ${admin.email} --name demo --scopes admin`
      : '',
  ]
    .filter(Boolean)
    .join('\n');
}
