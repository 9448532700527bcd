import multipart from '@fastify/multipart';
import { requestsRouteSchemas as schemas } from '@support-desk/contracts';
import { AppError, contractRoute, type HttpApp, validationError } from '@support-desk/platform';
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
      return validationError('body', 'send exactly one file part named file');
    case 'FST_REQ_FILE_TOO_LARGE':
      return err;
    default:
      // Truncated or malformed bodies surface as busboy errors ("Unexpected end of form", ...).
      if (e?.message && !e.code) return validationError('body', `malformed multipart body (${e.message})`);
      return err;
  }
}

/** Registered in their own encapsulated scope, so the multipart parser applies to the upload only. */
export async function attachmentRoutes(app: HttpApp, deps: Deps): Promise<void> {
  await app.register(multipart, {
    limits: {
      fileSize: deps.attachmentMaxBytes,
      files: 1,
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
      const file = await request.file();
      if (!file) throw validationError('body.file', 'is required');
      if (file.fieldname !== 'file') {
        file.file.resume();
        throw validationError('body.file', `is required (got a part named ${file.fieldname})`);
      }
      result = await storeAttachment(
        deps,
        request.principal,
        request.params.id,
        { filename: file.filename, stream: file.file },
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
