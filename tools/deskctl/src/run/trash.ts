import type { BulkJobView, DeletedRequestItem } from '@support-desk/contracts';
import { positiveInt, UsageError } from '../args.js';
import { type Run, when } from '../command.js';
import { requestsAdminCommands } from '../commands/requests-admin.js';
import { listRun, pageOf } from './list.js';
import { askRequests } from './requests-admin.js';

/** `--all` (or a later page) reads the trash at most this many pages of 100: a bound, not a limit. */
const MAX_TRASH_PAGES = 1000;

/**
 * `deskctl requests deleted|restore`, `deskctl jobs show`: the trash and bulk jobs, asked of the
 * requests service through its admin RPC (run/requests-admin.ts).
 */
export const runs: Record<string, Run> = {
  // The trash pages by cursor and counts nothing; deskctl's lists page by number with a total, so
  // the trash (what 30 days of deletions leave, bounded by the retention) is read whole, by cursor.
  'requests deleted': listRun<DeletedRequestItem>(requestsAdminCommands['requests deleted']!, {
    key: 'deleted',
    columns: ['id', 'title', 'status', 'priority', 'requester', 'deleted', 'deleted by', 'purge after'],
    row: (r) => [
      r.id,
      r.title,
      r.status,
      r.priority,
      r.requester.email,
      when(r.deletedAt),
      r.deletedBy ?? '-',
      when(r.purgeAfter),
    ],
    async fetch(deps, ctx, _v, _pos, nats, request) {
      const all: DeletedRequestItem[] = [];
      let cursor: string | undefined;
      for (let n = 0; n < MAX_TRASH_PAGES; n++) {
        const page = await askRequests(deps, nats, ctx, 'trash.list', {
          limit: 100,
          ...(cursor && { cursor }),
        });
        all.push(...page.deleted);
        if (!page.pagination.nextCursor) return pageOf(all, request);
        cursor = page.pagination.nextCursor;
      }
      throw new Error(`the trash has more than ${MAX_TRASH_PAGES} pages of 100`);
    },
  }),
  async 'requests restore'(deps, ctx, _v, pos, nats) {
    const { request } = await askRequests(deps, nats, ctx, 'trash.restore', { id: pos[0]! });
    return { json: request, text: `restored request ${request.id} "${request.title}" (${request.status})` };
  },
  async 'jobs show'(deps, ctx, v, pos, nats) {
    const limit = positiveInt(v.limit, 'limit') ?? 20;
    if (limit > 100) throw new UsageError('--limit must be at most 100');
    const page = positiveInt(v.page, 'page') ?? 1;
    const { job } = await askRequests(deps, nats, ctx, 'jobs.get', { id: pos[0]!, page, limit });
    return { json: job, text: describeJob(job) };
  },
};

function describeJob(job: BulkJobView): string {
  const results = job.results.map(
    (r) =>
      `  #${r.index}  ${r.id}  ${r.status} (${r.httpStatus})${r.error ? `  ${r.error.code}: ${r.error.message}` : ''}`,
  );
  const pages = job.pagination as { page?: number; pages?: number };
  return [
    `${job.id}  ${job.action}  ${job.status}`,
    `items:     ${job.processed} of ${job.total} processed: ${job.succeeded} succeeded, ${job.failed} failed`,
    `created:   ${when(job.createdAt)}   completed: ${when(job.completedAt)}`,
    ...(results.length ? [`results (page ${pages.page ?? 1} of ${pages.pages ?? 1}):`, ...results] : []),
  ].join('\n');
}
