import multipart from '@fastify/multipart';
import { requestsRouteSchemas as S } from '@support-desk/contracts';
import { AppError, type HttpApp, ok, requireScope, validationError } from '@support-desk/platform';
import {
  checkUploadAllowed,
  contentDisposition,
  openAttachment,
  storeAttachment,
} from '../app/attachments.js';
import type { Core } from '../app/core.js';

/** Multipart framing allowance on top of the file itself, for the early Content-Length check. */
const MULTIPART_OVERHEAD = 64 * 1024;

const upload = S['POST /v1/requests/:id/attachments'];
const download = S['GET /v1/attachments/:id'];

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

export async function attachmentRoutes(app: HttpApp, core: Core): Promise<void> {
  await app.register(multipart, {
    limits: {
      fileSize: core.attachmentMaxBytes,
      files: 1,
      fields: 4,
      parts: 5,
      fieldNameSize: 100,
      fieldSize: 1024,
      headerPairs: 100,
    },
    throwFileSizeLimit: true,
  });

  app.post<{ Params: { id: string } }>(
    '/v1/requests/:id/attachments',
    { schema: { params: upload.params, response: upload.response } },
    async (request, reply) => {
      requireScope(request, 'requests:write');
      const length = Number(request.headers['content-length'] ?? 0);
      if (length > core.attachmentMaxBytes + MULTIPART_OVERHEAD) {
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `body.file exceeds the maximum attachment size of ${core.attachmentMaxBytes} bytes`,
        );
      }
      await checkUploadAllowed(core, request.principal, request.params.id);
      let result: Awaited<ReturnType<typeof storeAttachment>>;
      try {
        const file = await request.file();
        if (!file) throw validationError('body.file', 'is required');
        if (file.fieldname !== 'file') {
          file.file.resume();
          throw validationError('body.file', `is required (got a part named ${file.fieldname})`);
        }
        result = await storeAttachment(
          core,
          request.principal,
          request.params.id,
          { filename: file.filename, stream: file.file },
          isTooLarge,
        );
      } catch (err) {
        throw multipartError(err);
      }
      return reply.code(201).send(ok(result));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/attachments/:id',
    { schema: { params: download.params } },
    async (request, reply) => {
      requireScope(request, 'requests:read');
      const { record, stream } = await openAttachment(core, request.params.id);
      return reply
        .header('content-type', record.contentType)
        .header('content-length', String(record.size))
        .header('content-disposition', contentDisposition(record.filename))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .send(stream);
    },
  );
}
