import type { ChildProcess, StdioOptions } from 'node:child_process';

export type ServiceName = 'identity' | 'requests' | 'audit' | 'webhooks' | 'gateway';

export interface ServiceSpec {
  name: ServiceName;
  portVar: string;
  /** The gateway's variable holding this service's upstream URLs (none for the gateway). */
  urlVar: string | null;
  /** Development ports (`npm start`). */
  port: number;
  metricsPort: number;
}

/** One process of a stack: `requests`, `requests#2`, … */
export interface ServiceInstance {
  name: string;
  service: ServiceSpec;
  port: number;
  metricsPort: number;
}

export interface PrincipalKeys {
  signingKey: string;
  verifyKeys: string;
}

export declare const SERVICES: readonly ServiceSpec[];
export declare function stackInstances(
  services: readonly ServiceSpec[],
  replicas: number,
  place: (
    service: ServiceSpec,
    k: number,
  ) => { port: number; metricsPort: number } | Promise<{ port: number; metricsPort: number }>,
): Promise<ServiceInstance[]>;
export declare function stackEnvironment(instances: readonly ServiceInstance[]): Record<string, string>;
export declare function instanceEnvironment(
  instance: ServiceInstance,
  keys: PrincipalKeys,
): Record<string, string>;
export declare const serviceEntry: (root: string, name: ServiceName) => string;
export declare const serviceArgs: (root: string, name: ServiceName) => string[];
export declare function spawnService(
  root: string,
  name: ServiceName,
  options: { env: NodeJS.ProcessEnv; stdio: StdioOptions; wrap?: string[]; detached?: boolean },
): ChildProcess;
export declare function waitUntilReady<I extends ServiceInstance>(
  instances: readonly I[],
  options: {
    isReady: (instance: I) => Promise<boolean>;
    exited?: (instance: I) => string | null | undefined;
    timeoutMs: number;
    intervalMs: number;
  },
): Promise<void>;
export declare function stopProcess(child: ChildProcess, timeoutMs: number, kill?: () => void): Promise<void>;
