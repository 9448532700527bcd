import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { newId, type Principal, REQUEST_LIMITS } from '@support-desk/contracts';
import {
  AppError,
  buildEvent,
  contextFromPrincipal,
  conflict,
  eventEntry,
  forbidden,
  humanBytes,
  notFound,
  validationError,
} from '@support-desk/platform/core';
import { fileTypeFromBuffer } from 'file-type';
import type { AttachmentRecord, RequestRecord } from '../store/requests.js';
import type { RequestForUpdate } from '../store/requests-repository.js';
import { type Deps } from './deps.js';
import { attachmentUrl, seesInternal, withRequestSnapshot } from './queries.js';
import { attachmentBytesStored, attachmentsStored } from '../metrics.js';

/** Bytes file-type needs to recognise every format it knows. */
const SNIFF_BYTES = 4100;

/**
 * A display name that is safe anywhere: no path, no control or reserved characters, NFC,
 * at most 255 characters keeping the extension. Storage is keyed by id, never by this name.
 */
function sanitizeFilename(raw: string | undefined): string {
  const base = (raw ?? '').normalize('NFC').split(/[/\\]/).pop() ?? '';
  let name = base
    // eslint-disable-next-line no-control-regex -- stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .replace(/[<>:"|?*]/g, '_')
    .replace(/^[\s.]+|[\s.]+$/g, '');
  if (!name) name = 'attachment';
  const max = REQUEST_LIMITS.filenameMax;
  if (name.length > max) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = name.slice(0, max - ext.length) + ext;
  }
  return name;
}

/** Passes bytes through, counting them and keeping the first few for type detection. */
class Sniffer extends Transform {
  size = 0;
  private head: Buffer[] = [];
  private headLength = 0;
  override _transform(
    chunk: Buffer,
    _enc: BufferEncoding,
    done: (err?: Error | null, data?: Buffer) => void,
  ) {
    this.size += chunk.length;
    if (this.headLength < SNIFF_BYTES) {
      const part = chunk.subarray(0, SNIFF_BYTES - this.headLength);
      this.head.push(Buffer.from(part));
      this.headLength += part.length;
    }
    done(null, chunk);
  }
  headBytes(): Buffer {
    return Buffer.concat(this.head);
  }
}

export interface IncomingFile {
  filename: string | undefined;
  stream: Readable & { truncated?: boolean };
  /**
   * Reads what follows the file in the body, and fails if it holds another file: read after the
   * bytes are stored and before the request is changed, so a refused body leaves nothing behind.
   */
  rest?: () => Promise<void>;
}

/** The 413 for a file over the limit, the limit in human units (`… limited to 25 MiB`). */
export const attachmentTooLarge = (max: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `body.file is too large: attachments are limited to ${humanBytes(max)}`);

/** The uploader may attach to this request and it has room for one more attachment. */
function checkUpload(principal: Principal, current: RequestRecord): void {
  if (!seesInternal(principal) && principal.userId !== current.requester.id) {
    throw forbidden('Only the requester, agents and admins may attach files');
  }
  if (current.attachments.length >= REQUEST_LIMITS.attachmentsPerRequestMax) {
    throw conflict(`A request holds at most ${REQUEST_LIMITS.attachmentsPerRequestMax} attachments`);
  }
}

/**
 * Checks the request before any byte is stored (so refusals never leave a file behind). Returns
 * the request as read, for `storeAttachment` to record the file on without reading it again.
 */
export async function checkUploadAllowed(
  deps: Deps,
  principal: Principal,
  requestId: string,
): Promise<RequestForUpdate> {
  const current = await deps.requests.findForUpdate(requestId);
  if (!current) throw notFound('Request');
  checkUpload(principal, current);
  return current;
}

/**
 * Streams the file into GridFS under a new attachment id, detects its type from the bytes,
 * then records it on the request with its event in one write. Any failure removes the file.
 * `isTooLarge` recognises the size-limit error the source stream fails with; `checked` is the
 * request as `checkUploadAllowed` read it (changed meanwhile, the write's revision check misses
 * and the request is read again).
 */
export async function storeAttachment(
  deps: Deps,
  principal: Principal,
  requestId: string,
  file: IncomingFile,
  isTooLarge: (err: unknown) => boolean,
  checked?: RequestForUpdate,
) {
  const filename = sanitizeFilename(file.filename);
  const id = newId('attachment', deps.clock().getTime());
  const sniffer = new Sniffer();
  const upload = deps.files.openUpload(id, filename, { requestId, uploadedBy: principal.userId });
  try {
    await pipeline(file.stream, sniffer, upload);
    if (file.stream.truncated) throw attachmentTooLarge(deps.attachmentMaxBytes);
    if (sniffer.size === 0) throw validationError('body.file', 'is empty');
    await file.rest?.();
  } catch (err) {
    await deps.files.remove(id).catch(() => undefined);
    if (isTooLarge(err)) throw attachmentTooLarge(deps.attachmentMaxBytes);
    throw err;
  }
  try {
    const detected = await fileTypeFromBuffer(sniffer.headBytes());
    const ctx = contextFromPrincipal(principal);
    const stored = await deps.requests.update(
      requestId,
      async (current) => {
        checkUpload(principal, current);
        const now = deps.clock();
        const record: AttachmentRecord = {
          id,
          filename,
          size: sniffer.size,
          contentType: detected?.mime ?? 'application/octet-stream',
          uploadedAt: now,
          uploadedBy: principal.userId,
        };
        const event = buildEvent(
          'request.attachment_added',
          requestId,
          ctx,
          {
            attachment: {
              from: null,
              to: { id, filename, size: record.size, contentType: record.contentType },
            },
          },
          now,
        );
        const after = { ...current, updatedAt: now, attachments: [...current.attachments, record] };
        const events = await withRequestSnapshot(deps, [event], after, now);
        return {
          write: {
            set: { updatedAt: now },
            append: { attachments: [record] },
            outbox: events.map((e) => eventEntry(deps.names, e)),
          },
          result: { id, filename, size: record.size, url: attachmentUrl(deps, id) },
        };
      },
      checked,
    );
    attachmentsStored.inc();
    attachmentBytesStored.inc(sniffer.size);
    return stored;
  } catch (err) {
    await deps.files.remove(id).catch(() => undefined);
    throw err;
  }
}

/**
 * The attachment's record and bytes, if its request is visible (soft-deleted → 404). The file,
 * keyed by the attachment id, names its request; both are read by `_id` (a query on
 * `attachments.id` would read every request on FerretDB).
 */
export async function openAttachment(deps: Deps, attachmentId: string) {
  const stored = await deps.files.find(attachmentId);
  const holder = stored?.metadata ? await deps.requests.findVisible(stored.metadata.requestId) : null;
  const record = holder?.attachments.find((a) => a.id === attachmentId);
  if (!stored || !record) throw notFound('Attachment');
  return { record, stream: deps.files.openDownload(stored) };
}

/** `attachment; filename="ascii"; filename*=UTF-8''…` (RFC 6266 / 8187). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
