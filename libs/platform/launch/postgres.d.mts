export declare const STORE_BACKENDS: readonly ['postgresql', 'sqlite'];
export type StoreBackend = (typeof STORE_BACKENDS)[number];
/** `SD_STORE`'s value, checked (unset or empty: `postgresql`); throws naming the variable. */
export declare function storeBackend(value: string | undefined): StoreBackend;
export declare const FERRETDB_ROLE: string;
export declare const postgresSettings: (place: {
  host: string;
  port: number;
  socketDir: string;
}) => Record<string, string>;
export declare const ferretdbPostgresUrl: (place: { host: string; port: number; database: string }) => string;

export interface PostgresPlace {
  host?: string;
  port: number;
  user: string;
  database: string;
  timeoutMs?: number;
}
export declare class PostgresError extends Error {
  /** The SQLSTATE, when the server answered with an error. */
  code?: string;
}
/** Runs `sql` (simple query protocol, trust authentication) and resolves with the last result's text rows. */
export declare function pgQuery(place: PostgresPlace, sql: string): Promise<(string | null)[][]>;
export declare function pgReady(place: PostgresPlace, timeoutMs?: number): Promise<boolean>;
