import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FERRETDB_ENV, ferretdbArgs, mongodArgs, natsArgs, redisArgs } from '@support-desk/platform/launch';
import type { Teardownable } from './env.js';

/**
 * Private, real server processes for tests that must stop and restart a dependency (outage
 * tests) without disturbing the shared servers other test files use. Loopback only.
 */
export interface PrivateServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Kills the process with SIGKILL (a crash) and waits until it is gone. */
  crash(): Promise<void>;
  /** Pauses the process (SIGSTOP: it holds its connections and answers nothing) or resumes it. */
  pause(paused: boolean): void;
}

const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../../../../../..');

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

function findBinary(name: string, extra: string[] = []): string {
  const dirs = [...extra, ...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/local/bin'];
  for (const d of dirs) {
    const p = d.endsWith(name) ? d : join(d, name);
    if (existsSync(p)) return p;
  }
  throw new Error(`${name} not found (run npm test, which installs it)`);
}

async function waitForPort(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const up = await new Promise<boolean>((res) => {
      const s = new Socket();
      s.once('connect', () => {
        s.destroy();
        res(true);
      });
      s.once('error', () => res(false));
      s.connect(port, '127.0.0.1');
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server on port ${port} did not start within ${timeoutMs} ms`);
}

function privateServer(
  t: Teardownable,
  scheme: string,
  command: (port: number, dir: string) => { bin: string; args: string[]; env?: NodeJS.ProcessEnv },
  port: number,
): PrivateServer {
  const dir = mkdtempSync(join(tmpdir(), 'sd-test-'));
  let child: ChildProcess | undefined;
  const server: PrivateServer = {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    async start() {
      const { bin, args, env } = command(port, dir);
      child = spawn(bin, args, { stdio: 'ignore', env: { ...process.env, ...env } });
      await waitForPort(port);
    },
    async crash() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      const gone = new Promise<void>((res) => c.once('exit', () => res()));
      c.kill('SIGKILL');
      await gone;
    },
    pause(paused) {
      child?.kill(paused ? 'SIGSTOP' : 'SIGCONT');
    },
    async stop() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((res) => {
        const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
        c.once('exit', () => {
          clearTimeout(timer);
          res();
        });
        c.kill('SIGTERM');
      });
    },
  };
  t.teardown(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return server;
}

/** A private nats-server; with `configFile`, that file (e.g. its authorization block) applies too. */
export async function startPrivateNats(
  t: Teardownable,
  { configFile, env }: { configFile?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<PrivateServer> {
  const port = await freePort();
  const s = privateServer(
    t,
    'nats',
    (p, dir) => ({
      bin: findBinary('nats-server'),
      // Command-line flags override the file's listen address, ports and store directory.
      args: [...(configFile ? ['-c', configFile] : []), ...natsArgs({ host: '127.0.0.1', port: p, dir })],
      env,
    }),
    port,
  );
  await s.start();
  return s;
}

/** A private redis-server; `extraArgs` (e.g. `--user` ACL rules) follow the usual settings. */
export async function startPrivateRedis(
  t: Teardownable,
  { extraArgs = [] }: { extraArgs?: string[] } = {},
): Promise<PrivateServer> {
  const port = await freePort();
  const s = privateServer(
    t,
    'redis',
    (p, dir) => ({
      bin: findBinary('redis-server'),
      args: [...redisArgs({ host: '127.0.0.1', port: p, dir }), ...extraArgs],
    }),
    port,
  );
  await s.start();
  return s;
}

export async function startPrivateMongo(t: Teardownable): Promise<PrivateServer> {
  const port = await freePort();
  const candidates = [
    process.env.FERRETDB_BIN ?? '',
    join(process.env.GOPATH ?? join(homedir(), 'go'), 'bin', 'ferretdb'),
    join(REPO_ROOT, '.data', 'bin', 'ferretdb'),
  ].filter(Boolean);
  const s = privateServer(
    t,
    'mongodb',
    (p, dir) => {
      try {
        return {
          bin: findBinary('mongod'),
          args: mongodArgs({ host: '127.0.0.1', port: p, dir }),
        };
      } catch {
        return {
          bin: findBinary('ferretdb', candidates),
          args: ferretdbArgs({ host: '127.0.0.1', port: p, dir, logLevel: 'error' }),
          env: FERRETDB_ENV,
        };
      }
    },
    port,
  );
  await s.start();
  return s;
}
