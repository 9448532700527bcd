import type { Connection, Model, Schema } from 'mongoose';

/** The connection's model of that name, created once (never on mongoose's global registry). */
export function modelOn<T>(conn: Connection, name: string, schema: Schema<T>): Model<T> {
  return (conn.models[name] as Model<T> | undefined) ?? conn.model<T>(name, schema);
}
