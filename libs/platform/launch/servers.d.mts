export * from './postgres.mjs';

export interface ServerPlace {
  host: string;
  port: number;
  /** The server's data directory. */
  dir: string;
}

export declare const redisArgs: (place: ServerPlace) => string[];
export declare const redisClusterArgs: (
  place: ServerPlace & { busPort: number; nodeTimeoutMs?: number },
) => string[];
export declare const redisClusterCreateArgs: (host: string, ports: number[]) => string[];
export declare const natsArgs: (place: ServerPlace & { monitorPort?: number }) => string[];
export declare const natsClusterArgs: (
  place: ServerPlace & {
    monitorPort?: number;
    serverName: string;
    clusterName: string;
    routePort: number;
    /** Every server's route listener (its own included). */
    routes: { host: string; port: number }[];
  },
) => string[];
export declare const mongodArgs: (place: ServerPlace) => string[];
/** FerretDB on PostgreSQL when `postgresqlUrl` is given, else on SQLite under `dir`. */
export declare const ferretdbArgs: (
  place: ServerPlace & {
    debugPort?: number;
    logLevel?: 'debug' | 'info' | 'warn' | 'error';
    postgresqlUrl?: string;
  },
) => string[];
export declare const FERRETDB_ENV: Record<string, string>;
