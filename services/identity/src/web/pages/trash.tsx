import type { DeletedRequestItem } from '@support-desk/contracts';
import { consolePage, CsrfField, DateCell, type Frame } from './frame.js';
import { Messages } from './layout.js';
import { ActionHeading, Table, RowHeading } from './lists.js';

const SECTION = '/settings/trash';

export interface TrashPageOptions {
  frame: Frame;
  /** null: the requests service is not answering (the page says so; the rest still works). */
  deleted: DeletedRequestItem[] | null;
  /** The older deletions' page, if there are more. */
  nextCursor: string | null;
  /** This page is not the first (a link back to the newest). */
  older: boolean;
  notice?: string;
  error?: string;
}

function DeletedRow({ frame, r }: { frame: Frame; r: DeletedRequestItem }) {
  return (
    <tr data-request-id={r.id}>
      <RowHeading name={r.title}>
        <span class="muted">{r.id}</span>
      </RowHeading>
      <td>
        <span class="tag">{r.status}</span>
      </td>
      <td>{r.priority}</td>
      <td class="wrap">{r.requester.email}</td>
      <td>
        <DateCell iso={r.deletedAt} />
      </td>
      <td>{r.deletedBy ? <code>{r.deletedBy}</code> : <span class="muted">—</span>}</td>
      <td>
        <DateCell iso={r.purgeAfter} />
      </td>
      <td>
        <form method="post" action={`${SECTION}/restore`}>
          <CsrfField csrf={frame.csrf} />
          <input type="hidden" name="id" value={r.id} />
          <button type="submit" class="secondary" aria-label={`Restore ${r.title}`}>
            Restore
          </button>
        </form>
      </td>
    </tr>
  );
}

const HEAD = ['Title', 'Status', 'Priority', 'Requester', 'Deleted', 'Deleted by', 'Purged after'];

function DeletedList({
  frame,
  deleted,
  older,
}: {
  frame: Frame;
  deleted: DeletedRequestItem[];
  older: boolean;
}) {
  if (deleted.length === 0)
    return (
      <p class="muted" id="no-rows">
        {older ? 'No older deletions.' : 'The trash is empty.'}
      </p>
    );
  return (
    <Table caption="Deleted requests, newest deletion first" head={[...HEAD, <ActionHeading />]}>
      {deleted.map((r) => (
        <DeletedRow frame={frame} r={r} />
      ))}
    </Table>
  );
}

/** Links to the newest deletions and to older ones (the trash is paged by cursor, not counted). */
function CursorPager({ older, nextCursor }: { older: boolean; nextCursor: string | null }) {
  if (!older && !nextCursor) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {older && <a href={SECTION}>← Newest deletions</a>}
      {nextCursor && (
        <a href={`${SECTION}?cursor=${encodeURIComponent(nextCursor)}`} rel="next">
          Older deletions →
        </a>
      )}
    </nav>
  );
}

/** The deleted requests, newest deletion first, a page at a time (by cursor), each with Restore. */
export function trashPage(opts: TrashPageOptions) {
  const { frame, deleted } = opts;
  return consolePage(
    'Trash',
    SECTION,
    frame,
    <>
      <Messages notice={opts.notice} error={opts.error} />
      <p class="muted">
        Deleted requests stay here for the trash period, then they are purged for good with their comments and
        attachments. Restoring brings a request back as it was, comments and attachments included.
      </p>
      <section id="list" aria-label="Deleted requests">
        {deleted !== null && <DeletedList frame={frame} deleted={deleted} older={opts.older} />}
        <CursorPager older={opts.older} nextCursor={opts.nextCursor} />
      </section>
    </>,
  );
}
