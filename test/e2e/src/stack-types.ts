import type { Api, Json } from './http.js';

// The shape of a stack as a test file sees it (private or shared).

export const SERVICES = ['identity', 'requests', 'audit', 'webhooks', 'gateway'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface DeskctlResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Json;
}

/** What a file needs to reach a running stack: written by the stack's owner, read by its users. */
export interface StackDescriptor {
  /** Unique name of this stack: database prefix, NATS namespace, Redis prefixes. */
  run: string;
  origin: string;
  origins: string[];
  ports: Record<ServiceName, number>;
  /** The environment shared by the services and deskctl. */
  env: Record<string, string>;
  logDir: string;
  instances: string[];
  metricsOrigins: Record<string, string>;
}

export interface Stack {
  /** Unique name of this stack: database prefix, NATS namespace, Redis prefixes. */
  run: string;
  /**
   * Unique to this test file, for names that must not collide with other files' data (emails,
   * group names): on a shared stack (stack-pool.ts) several files run one after another.
   */
  tag: string;
  /** Whether other test files use this stack too (then it cannot be stopped or restarted). */
  shared: boolean;
  /** Gateway origin, e.g. `http://127.0.0.1:41234` (the OAuth endpoints live here). */
  origin: string;
  /** Every gateway replica's origin (the first is `origin`). */
  origins: string[];
  /** `{base_url}` of the spec: origin + `/v1`. */
  base: string;
  ports: Record<ServiceName, number>;
  /** The environment shared by the services and deskctl. */
  env: Record<string, string>;
  ca?: Buffer;
  logDir: string;
  api(token: string | null): Api;
  /** A client of one gateway replica (0-based). */
  apiVia(gateway: number, token: string | null): Api;
  /** Runs `deskctl <args> --json` against this stack. */
  deskctl(args: string[], options?: { stdin?: string; json?: boolean }): Promise<DeskctlResult>;
  /** Runs `sd-seed <args> --json` (the demo seeder) against this stack. */
  seed(args: string[], options?: { json?: boolean }): Promise<DeskctlResult>;
  /** Like `deskctl` but throws (with stderr) unless it exits 0 with JSON on stdout. */
  deskctlJson(args: string[], options?: { stdin?: string }): Promise<Json>;
  /** Many commands in one `deskctl batch` process; each one's `--json` result, or throws on any failure. */
  deskctlBatch(commands: string[][]): Promise<Json[]>;
  /** What another process needs to reach this stack. */
  descriptor: StackDescriptor;
  logTail(service: ServiceName, lines?: number): string;
  /** Every process, `requests`, `requests#2`, ... (service order: identity, requests, audit, webhooks, gateway). */
  instances: string[];
  /** Each instance's /metrics origin (`METRICS_PORT`), by instance name. */
  metricsOrigins: Record<string, string>;
  /** Stops one instance (SIGTERM gracefully, SIGKILL as a crash), starts it again, waits until ready. */
  restart(instance: string, signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Stops one service (SIGTERM, bounded), e.g. to see the gateway answer for an unreachable upstream. */
  stopService(service: ServiceName): Promise<void>;
  stop(): Promise<void>;
}
