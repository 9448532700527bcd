import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';

/**
 * The operator CLI of the identity service, run as a child process: what has no public API
 * (creating users, groups and API keys as an operator, revoking keys) the seeder does exactly as
 * an operator would. It inherits this process's environment (MONGO_URL, NATS_URL, ...).
 *
 * One `deskctl batch` process serves the whole run: each deskctl process spends most of a second
 * of CPU loading the service's modules and connecting before its command, which for the ~40
 * commands of a run was a third of the seed's time. A deskctl without `batch` (an older one named
 * by DESKCTL) is run once per command instead.
 */
const DESKCTL_TIMEOUT_MS = 60_000;
/** Time for the batch to publish its last events and exit once its input ends. */
const CLOSE_TIMEOUT_MS = 30_000;

export class DeskctlError extends Error {}

/** `@support-desk/deskctl`'s bin, or `DESKCTL` (a path to another deskctl). */
function deskctlPath(): string {
  if (process.env.DESKCTL) return process.env.DESKCTL;
  return createRequire(import.meta.url).resolve('@support-desk/deskctl/bin/deskctl.js');
}

const failure = (args: string[], message: string) =>
  new DeskctlError(`deskctl ${args.slice(0, 2).join(' ')}: ${message}`);

/** The message of deskctl's error: one JSON object on stderr under --json (older: a text line). */
function errorOf(stderr: string): string {
  const text = stderr.trim();
  try {
    return String(
      (JSON.parse(text.split('\n').at(-1) ?? '') as { error: { message: string } }).error.message,
    );
  } catch {
    return text.replace(/^deskctl: (error: )?/, '');
  }
}

/** Runs `deskctl <args> --json` in a process of its own and returns its JSON. */
function deskctlProcess<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [deskctlPath(), ...args, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), DESKCTL_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new DeskctlError(`deskctl could not start: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(failure(args, errorOf(stderr) || `exit ${code}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout) as T);
      } catch {
        reject(failure(args, 'printed no JSON'));
      }
    });
  });
}

interface Pending {
  args: string[];
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export interface Deskctl {
  /** Runs one command (`args` after `deskctl`, without `--json`) and returns what `--json` prints. */
  run<T = Record<string, unknown>>(args: string[]): Promise<T>;
  /** Ends the batch (its events published) and waits for it to exit, bounded. */
  close(): Promise<void>;
}

/** A deskctl for one seeding run; the batch process starts at the first command. */
export function openDeskctl(): Deskctl {
  let child: ChildProcessWithoutNullStreams | null = null;
  let exited: Promise<void> = Promise.resolve();
  let stderr = '';
  let answered = 0;
  /** Set when this deskctl has no `batch` command: every command then gets a process of its own. */
  let oneProcessPerCommand = false;
  const queue: Pending[] = [];

  const failAll = (why: string) => {
    for (const p of queue.splice(0)) {
      clearTimeout(p.timer);
      p.reject(failure(p.args, why));
    }
  };

  const start = () => {
    const batch = spawn(process.execPath, [deskctlPath(), 'batch'], { stdio: ['pipe', 'pipe', 'pipe'] });
    child = batch;
    batch.stdin.on('error', () => undefined);
    batch.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    createInterface({ input: batch.stdout, crlfDelay: Infinity }).on('line', (line) => {
      const p = queue.shift();
      if (!p) return;
      clearTimeout(p.timer);
      answered += 1;
      try {
        const answer = JSON.parse(line) as { ok: boolean; result?: unknown; error?: string };
        if (answer.ok) p.resolve(answer.result);
        else p.reject(failure(p.args, answer.error ?? 'failed'));
      } catch {
        p.reject(failure(p.args, 'printed no JSON'));
      }
    });
    exited = new Promise((resolve) => {
      batch.on('error', (err) => {
        failAll(`could not start: ${err.message}`);
        resolve();
      });
      batch.on('close', (code) => {
        child = null;
        if (answered === 0 && code === 2 && /unknown command/.test(stderr)) {
          // An older deskctl: replay what was queued, one process per command.
          oneProcessPerCommand = true;
          for (const p of queue.splice(0)) {
            clearTimeout(p.timer);
            deskctlProcess(p.args).then(p.resolve, p.reject);
          }
        } else {
          failAll(stderr.trim().replace(/^deskctl: (error: )?/, '') || `batch exited ${code}`);
        }
        resolve();
      });
    });
  };

  return {
    run<T>(args: string[]): Promise<T> {
      if (oneProcessPerCommand) return deskctlProcess<T>(args);
      if (!child) start();
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          // One command stuck holds every later one: stop the batch, fail what is queued.
          failAll(`no answer within ${DESKCTL_TIMEOUT_MS} ms`);
          child?.kill('SIGKILL');
        }, DESKCTL_TIMEOUT_MS);
        queue.push({ args, resolve: resolve as (v: unknown) => void, reject, timer });
        child!.stdin.write(`${JSON.stringify(args)}\n`);
      });
    },
    async close() {
      const running = child;
      if (!running) return;
      running.stdin.end();
      const timer = setTimeout(() => running.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
