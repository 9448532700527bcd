import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './stack.js';

/**
 * Installs (or finds up to date) a PyPI tool's venv with scripts/test/python-tools.mjs; its python,
 * beside which the tool's own commands are, or why it could not be installed.
 */
export function installPythonTool(name: string): { python: string } | { error: string } {
  const install = spawnSync(process.execPath, [path.join(ROOT, 'scripts/test/python-tools.mjs'), name], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  const python = install.stdout.trim().split('\n').pop() ?? '';
  if (install.status !== 0 || !python) return { error: `${name} could not be installed: ${install.stderr}` };
  return { python };
}

/** Runs a tool to its end (killed after `timeoutMs`), collecting what it prints. */
export async function runTool(
  command: string,
  args: string[],
  { timeoutMs, cwd }: { timeoutMs: number; cwd?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
