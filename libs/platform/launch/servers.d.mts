export interface ServerPlace {
  host: string;
  port: number;
  /** The server's data directory. */
  dir: string;
}

export declare const redisArgs: (place: ServerPlace) => string[];
export declare const natsArgs: (place: ServerPlace & { monitorPort?: number }) => string[];
export declare const mongodArgs: (place: ServerPlace) => string[];
export declare const ferretdbArgs: (
  place: ServerPlace & { debugPort?: number; logLevel?: 'debug' | 'info' | 'warn' | 'error' },
) => string[];
export declare const FERRETDB_ENV: Record<string, string>;
