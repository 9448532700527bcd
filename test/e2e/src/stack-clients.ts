import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Api, type Json } from './http.js';
import type { DeskctlResult, ServiceName, Stack, StackDescriptor } from './stack-types.js';

/** The repository root (this file is test/e2e/dist/src/stack-clients.js once compiled). */
const ROOT = path.resolve(fileURLToPath(import.meta.url), '../../../../..');

export const DESKCTL = path.join(ROOT, 'tools/deskctl/dist/src/deskctl.js');
const SD_SEED = path.join(ROOT, 'tools/seed/dist/src/cli.js');

const DESKCTL_TIMEOUT_MS = 60_000;
const SEED_TIMEOUT_MS = 240_000;

/** An instance's log file in the stack's log directory (`requests#2` → `requests-2.log`). */
export const logFileOf = (logDir: string, instance: string) =>
  path.join(logDir, `${instance.replace('#', '-')}.log`);

export function tailOf(file: string, lines = 40): string {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no log)';
  }
}

/** The last lines of every instance's log, for a failure report. */
export const tailsOf = (d: StackDescriptor) =>
  d.instances
    .map((name) => `--- ${name} (${logFileOf(d.logDir, name)})\n${tailOf(logFileOf(d.logDir, name))}`)
    .join('\n');

type Clients = Omit<Stack, 'tag' | 'shared' | 'descriptor' | 'restart' | 'stopService' | 'stop'>;

/** What a test file uses to talk to a running stack, private or shared: clients, deskctl, logs. */
export function stackClients(d: StackDescriptor, ca?: Buffer): Clients {
  const deskctl: Stack['deskctl'] = (args, opts = {}) =>
    runCli(DESKCTL, opts.json === false ? args : [...args, '--json'], { ...process.env, ...d.env }, opts);
  // The seeder runs deskctl with its own environment: the stack's, and progress files of its own.
  const seedEnv = { ...process.env, ...d.env, SD_SEED_STATE_DIR: path.join(d.logDir, `seed-${process.pid}`) };
  const seed: Stack['seed'] = (args, opts = {}) =>
    runCli(SD_SEED, opts.json === false ? args : [...args, '--json'], seedEnv, {
      timeoutMs: SEED_TIMEOUT_MS,
    });
  const deskctlJson: Stack['deskctlJson'] = async (args, opts = {}) => {
    const r = await deskctl(args, opts);
    if (r.code !== 0 || r.json === undefined) {
      throw new Error(
        `deskctl ${args.join(' ')} --json: exit ${r.code}\nstderr: ${r.stderr.trim()}\nstdout: ${r.stdout.trim().slice(0, 500)}`,
      );
    }
    return r.json;
  };
  const deskctlBatch: Stack['deskctlBatch'] = async (commands) => {
    const r = await deskctl(['batch'], {
      stdin: commands.map((c) => JSON.stringify(c)).join('\n'),
      json: false,
    });
    const answers = r.stdout
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { ok: boolean; result?: Json; error?: string });
    const failed = answers.findIndex((a) => !a.ok);
    if (r.code !== 0 || answers.length !== commands.length || failed >= 0) {
      const which =
        failed >= 0 ? `${commands[failed]!.join(' ')}: ${answers[failed]!.error}` : r.stderr.trim();
      throw new Error(`deskctl batch (${commands.length} commands): exit ${r.code}; ${which}`);
    }
    return answers.map((a) => a.result);
  };
  return {
    run: d.run,
    origin: d.origin,
    origins: d.origins,
    base: `${d.origin}/v1`,
    ports: d.ports,
    env: d.env,
    ca,
    logDir: d.logDir,
    api: (token) => new Api(d.origin, token, ca),
    apiVia: (gateway, token) => new Api(d.origins[gateway]!, token, ca),
    deskctl,
    deskctlJson,
    deskctlBatch,
    seed,
    logTail: (s: ServiceName, lines?: number) => tailOf(logFileOf(d.logDir, s), lines),
    instances: d.instances,
    metricsOrigins: d.metricsOrigins,
  };
}

/** Runs one of the project's CLIs (deskctl, sd-seed) with the stack's environment, bounded in time. */
function runCli(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  { stdin, timeoutMs = DESKCTL_TIMEOUT_MS }: { stdin?: string; timeoutMs?: number } = {},
): Promise<DeskctlResult> {
  if (!fs.existsSync(script)) {
    return Promise.resolve({
      code: 127,
      stdout: '',
      stderr: `${path.basename(script)} is not built (${path.relative(ROOT, script)} missing; run npx tsc -b)`,
      json: undefined,
    });
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => (stderr += String(err)));
    child.on('close', (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = stdout.trim() ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin ?? '');
  });
}
