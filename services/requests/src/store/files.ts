import mongoose, { type Connection } from 'mongoose';

export const ATTACHMENT_BUCKET = 'attachments';

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

/** GridFS in the service's own database; files are keyed by attachment id, never by filename. */
export function attachmentFiles(conn: Connection) {
  if (!conn.db) throw new Error('mongodb not connected');
  const db = conn.db;
  const bucket = new mongoose.mongo.GridFSBucket(db, { bucketName: ATTACHMENT_BUCKET });
  const files = db.collection<StoredFile>(`${ATTACHMENT_BUCKET}.files`);
  const chunks = db.collection(`${ATTACHMENT_BUCKET}.chunks`);
  return {
    openUpload: (id: string, filename: string, metadata: StoredFileMetadata) =>
      bucket.openUploadStreamWithId(id as never, filename, { metadata }),
    openDownload: (id: string) => bucket.openDownloadStream(id as never),
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
