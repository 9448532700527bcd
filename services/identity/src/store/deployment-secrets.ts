import { isDuplicateKeyError } from '@support-desk/platform/core';
import { type Connection, Schema } from 'mongoose';
import { modelOn } from './model.js';

/** A secret identity makes itself, once per deployment, and every replica reads. */
interface DeploymentSecretDoc {
  _id: string;
  value: string;
  createdAt: Date;
}

const DeploymentSecretSchema = new Schema<DeploymentSecretDoc>(
  {
    _id: { type: String, required: true },
    value: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { collection: 'deployment_secrets', versionKey: false },
);

/**
 * Secrets no operator should have to make (today the browser forms' CSRF key): created the first
 * time one is asked for, by whichever replica asks first (an insert with a unique `_id`, atomic on
 * every store), then the same for all of them and across restarts.
 */
export function createDeploymentSecretsRepository(conn: Connection) {
  const model = modelOn<DeploymentSecretDoc>(conn, 'DeploymentSecret', DeploymentSecretSchema);
  const read = async (name: string) => (await model.findById(name).lean<DeploymentSecretDoc>().exec())?.value;
  return {
    async getOrCreate(name: string, make: () => string, now: Date): Promise<string> {
      const found = await read(name);
      if (found !== undefined) return found;
      try {
        await model.create({ _id: name, value: make(), createdAt: now });
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const value = await read(name);
      if (value === undefined) throw new Error(`the deployment secret ${name} could not be stored`);
      return value;
    },
  };
}
