import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * The operator CLI of the identity service, run as a child process: what has no public API
 * (creating users, groups and API keys as an operator, revoking keys) the seeder does exactly as
 * an operator would. It inherits this process's environment (MONGO_URL, NATS_URL, ...).
 */
const DESKCTL_TIMEOUT_MS = 60_000;

export class DeskctlError extends Error {}

/** `@support-desk/identity`'s bin, or `DESKCTL` (a path to another deskctl). */
function deskctlPath(): string {
  if (process.env.DESKCTL) return process.env.DESKCTL;
  return createRequire(import.meta.url).resolve('@support-desk/identity/bin/deskctl.js');
}

/** Runs `deskctl <args> --json` and returns its JSON; a failure carries deskctl's own message. */
export function deskctl<T = Record<string, unknown>>(args: string[]): Promise<T> {
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
        const message = stderr.trim().replace(/^deskctl: (error: )?/, '') || `exit ${code}`;
        reject(new DeskctlError(`deskctl ${args.slice(0, 2).join(' ')}: ${message}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout) as T);
      } catch {
        reject(new DeskctlError(`deskctl ${args.slice(0, 2).join(' ')} printed no JSON`));
      }
    });
  });
}
