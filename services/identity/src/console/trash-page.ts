import type { DeletedRequestItem } from '@support-desk/contracts';
import { alertBox, esc } from '../oauth/page-layout.js';
import { consolePage, csrfField, dateCell, type Frame } from './frame.js';

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

function deletedRow(frame: Frame, r: DeletedRequestItem): string {
  return `<tr data-request-id="${esc(r.id)}"><th scope="row" class="wrap">${esc(r.title)}<br><span class="muted">${esc(r.id)}</span></th>
<td><span class="tag">${esc(r.status)}</span></td><td>${esc(r.priority)}</td><td class="wrap">${esc(r.requester.email)}</td>
<td>${dateCell(r.deletedAt)}</td><td>${r.deletedBy ? `<code>${esc(r.deletedBy)}</code>` : '<span class="muted">—</span>'}</td>
<td>${dateCell(r.purgeAfter)}</td>
<td><form method="post" action="${SECTION}/restore">${csrfField(frame.csrf)}<input type="hidden" name="id" value="${esc(r.id)}">
<button type="submit" class="secondary" aria-label="Restore ${esc(r.title)}">Restore</button></form></td></tr>`;
}

/** The deleted requests, newest deletion first, a page at a time (by cursor), each with Restore. */
export function trashPage(opts: TrashPageOptions): string {
  const { frame, deleted } = opts;
  const pager =
    opts.older || opts.nextCursor
      ? `<nav class="pager" aria-label="Pages">${opts.older ? `<a href="${SECTION}">← Newest deletions</a>` : ''}${
          opts.nextCursor
            ? `<a href="${SECTION}?cursor=${encodeURIComponent(opts.nextCursor)}" rel="next">Older deletions →</a>`
            : ''
        }</nav>`
      : '';
  const list =
    deleted === null
      ? ''
      : deleted.length === 0
        ? `<p class="muted" id="no-rows">${opts.older ? 'No older deletions.' : 'The trash is empty.'}</p>`
        : `<div class="table-wrap"><table><caption>Deleted requests, newest deletion first</caption>
<thead><tr><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Priority</th><th scope="col">Requester</th><th scope="col">Deleted</th><th scope="col">Deleted by</th><th scope="col">Purged after</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>${deleted.map((r) => deletedRow(frame, r)).join('')}</tbody></table></div>`;
  return consolePage(
    'Trash',
    SECTION,
    frame,
    `${alertBox(opts.notice, 'success')}${alertBox(opts.error)}
<p class="muted">Deleted requests stay here for the trash period, then they are purged for good with their comments and attachments. Restoring brings a request back as it was, comments and attachments included.</p>
<section id="list" aria-label="Deleted requests">${list}${pager}</section>`,
  );
}
