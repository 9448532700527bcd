import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../src/io.js';
import { runDeskctl } from '../src/main.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Parsed --json output. */
  json: any;
}

const parsed = (stdout: string): unknown => {
  try {
    return JSON.parse(stdout);
  } catch {
    return undefined;
  }
};

/**
 * Runs a deskctl command line against the harness's database and namespace (identity's
 * `harness(t).cliEnv`), in this process (`runDeskctl` with streams of its own: the same parsing,
 * sessions, use cases and output as the bin, without a Node start per command). The bin itself,
 * its exit status and its terminal, is what `deskctlProcess` and the end-to-end suite run.
 */
export async function deskctl(
  env: Record<string, string>,
  args: string[],
  stdin?: string,
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdin: Readable.from(stdin === undefined ? [] : [Buffer.from(stdin)]),
    stdout: { write: (text) => (stdout += text) },
    stderr: { write: (text) => (stderr += text) },
  };
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    runDeskctl(args, io),
    new Promise<number>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`deskctl ${args.join(' ')}: no answer in 60 s`)), 60_000);
    }),
  ]).finally(() => clearTimeout(timer));
  return { code, stdout, stderr, json: parsed(stdout) };
}

/** The compiled deskctl entry (what the bin imports). */
export const DESKCTL = fileURLToPath(new URL('../src/deskctl.js', import.meta.url));

/** Runs the compiled deskctl bin as its own process, like an operator's shell does. */
export function deskctlProcess(
  env: Record<string, string>,
  args: string[],
  stdin?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DESKCTL, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, json: parsed(stdout) });
    });
    child.stdin.end(stdin ?? '');
  });
}
