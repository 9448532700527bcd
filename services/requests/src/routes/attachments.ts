import multipart, { type Multipart, type MultipartFile } from '@fastify/multipart';
import { requestsRouteSchemas as schemas } from '@support-desk/contracts';
import { AppError, validationError } from '@support-desk/platform/core';
import { contractRoute, type HttpApp } from '@support-desk/platform/http';
import {
  attachmentTooLarge,
  checkUploadAllowed,
  contentDisposition,
  openAttachment,
  storeAttachment,
} from '../use-cases/attachments.js';
import type { Deps } from '../use-cases/deps.js';

/** Multipart framing allowance on top of the file itself, for the early Content-Length check. */
const MULTIPART_OVERHEAD = 64 * 1024;

const isTooLarge = (err: unknown) => (err as { code?: string })?.code === 'FST_REQ_FILE_TOO_LARGE';

/** Maps what busboy / @fastify/multipart fail with to our envelope (the process keeps serving). */
function multipartError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = err as { code?: string; message?: string };
  switch (e?.code) {
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the file as multipart/form-data');
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return oneFilePartOnly();
    case 'FST_REQ_FILE_TOO_LARGE':
      return err;
    default:
      // Truncated or malformed bodies surface as busboy errors ("Unexpected end of form", ...).
      if (e?.message && !e.code) return validationError('body', `malformed multipart body (${e.message})`);
      return err;
  }
}

type Parts = AsyncIterableIterator<Multipart>;

/** The first file part (form fields before it are ignored, as `request.file()` does). */
async function firstFile(parts: Parts): Promise<MultipartFile | undefined> {
  // next() by hand: leaving a for-await loop would close the iterator, and the rest of the body
  // is still to be read (noFurtherFile).
  for (let next = await parts.next(); !next.done; next = await parts.next()) {
    if (next.value.type === 'file') return next.value;
  }
  return undefined;
}

/** The rest of the body holds no second file part (a third is past busboy's `files` limit). */
async function noFurtherFile(parts: Parts): Promise<void> {
  for await (const part of parts) {
    if (part.type === 'file') {
      part.file.resume();
      throw oneFilePartOnly();
    }
  }
}

const oneFilePartOnly = () => validationError('body', 'send exactly one file part named file');

/** Registered in their own encapsulated scope, so the multipart parser applies to the upload only. */
export async function attachmentRoutes(app: HttpApp, deps: Deps): Promise<void> {
  await app.register(multipart, {
    limits: {
      fileSize: deps.attachmentMaxBytes,
      // Two: busboy drops files past its limit silently, so a second file must reach
      // noFurtherFile to be refused (and the first removed) instead of being ignored.
      files: 2,
      fields: 4,
      parts: 5,
      fieldNameSize: 100,
      fieldSize: 1024,
      headerPairs: 100,
    },
    throwFileSizeLimit: true,
  });

  contractRoute(app, schemas, 'POST /v1/requests/:id/attachments', async (request) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > deps.attachmentMaxBytes + MULTIPART_OVERHEAD) {
      throw attachmentTooLarge(deps.attachmentMaxBytes);
    }
    const checked = await checkUploadAllowed(deps, request.principal, request.params.id);
    let result: Awaited<ReturnType<typeof storeAttachment>>;
    try {
      const parts = request.parts();
      const file = await firstFile(parts);
      if (!file) throw validationError('body.file', 'is required');
      if (file.fieldname !== 'file') {
        file.file.resume();
        throw validationError('body.file', `is required (got a part named ${file.fieldname})`);
      }
      result = await storeAttachment(
        deps,
        request.principal,
        request.params.id,
        { filename: file.filename, stream: file.file, rest: () => noFurtherFile(parts) },
        isTooLarge,
        checked,
      );
    } catch (err) {
      throw multipartError(err);
    }
    return result;
  });

  contractRoute(app, schemas, 'GET /v1/attachments/:id', async (request, reply) => {
    const { record, stream } = await openAttachment(deps, request.params.id);
    return reply
      .header('content-type', record.contentType)
      .header('content-length', String(record.size))
      .header('content-disposition', contentDisposition(record.filename))
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cache-control', 'private, no-store')
      .send(stream);
  });
}
