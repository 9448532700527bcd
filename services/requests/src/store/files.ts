import { Readable } from 'node:stream';
import mongoose, { type Connection, type mongo } from 'mongoose';

const ATTACHMENT_BUCKET = 'attachments';

export interface StoredFileMetadata {
  requestId: string;
  uploadedBy: string;
}

export interface StoredFile {
  _id: string;
  length: number;
  filename: string;
  metadata?: StoredFileMetadata;
}

interface StoredChunk {
  files_id: string;
  n: number;
  data: mongo.Binary;
}

/**
 * GridFS in the service's own database; files are keyed by attachment id, never by filename.
 * Uploads go through the driver's GridFS stream. Downloads read the chunks of a file document
 * the caller has already read (the driver's download stream would read it once more first).
 */
export function attachmentFiles(conn: Connection) {
  if (!conn.db) throw new Error('mongodb not connected');
  const db = conn.db;
  const bucket = new mongoose.mongo.GridFSBucket(db, { bucketName: ATTACHMENT_BUCKET });
  const files = db.collection<StoredFile>(`${ATTACHMENT_BUCKET}.files`);
  const chunks = db.collection<StoredChunk>(`${ATTACHMENT_BUCKET}.chunks`);

  /** The file's bytes in order; fails on a missing chunk or a length that does not add up. */
  async function* chunksOf(file: StoredFile): AsyncGenerator<Buffer> {
    const cursor = chunks.find({ files_id: file._id }, { sort: { n: 1 }, projection: { n: 1, data: 1 } });
    let expected = 0;
    let bytes = 0;
    for await (const chunk of cursor) {
      if (chunk.n !== expected) throw new Error(`attachment ${file._id}: chunk ${expected} is missing`);
      const data = chunk.data.read(0, chunk.data.length());
      bytes += data.byteLength;
      expected++;
      yield Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    }
    if (bytes !== file.length)
      throw new Error(`attachment ${file._id}: ${bytes} of ${file.length} bytes stored`);
  }

  return {
    openUpload: (id: string, filename: string, metadata: StoredFileMetadata) =>
      bucket.openUploadStreamWithId(id as never, filename, { metadata }),
    openDownload: (file: StoredFile): Readable => Readable.from(chunksOf(file), { objectMode: false }),
    find: (id: string) => files.findOne({ _id: id }),
    /** Removes the file and any chunks, including those of an upload that never finished. */
    remove: async (id: string) => {
      await chunks.deleteMany({ files_id: id as never });
      await files.deleteOne({ _id: id });
    },
    ensureIndexes: async () => {
      await files.createIndex({ filename: 1, uploadDate: 1 });
      await chunks.createIndex({ files_id: 1, n: 1 }, { unique: true });
    },
  };
}

export type AttachmentFiles = ReturnType<typeof attachmentFiles>;
