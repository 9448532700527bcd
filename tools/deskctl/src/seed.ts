import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { cliIo, isProcessIo } from './io.js';
import type { Globals } from './program.js';

/**
 * `deskctl seed --demo ...`: the demo data set, made by the sd-seed tool (tools/seed), which
 * itself drives deskctl and the public API like any client. deskctl runs it as a child process
 * with the terminal (the progress bar is sd-seed's, on standard error) and returns its exit code.
 * sd-seed is a workspace of this repository, not a dependency of deskctl (it depends on deskctl),
 * so it is found where npm links workspaces.
 */
export function runSeeder(args: string[], globals: Globals): Promise<number> {
  let bin: string;
  try {
    bin = createRequire(import.meta.url).resolve('@support-desk/seed/bin/sd-seed.js');
  } catch {
    throw new Error(
      'the seeder (tools/seed) is not installed here: run deskctl from the repository (npm run deskctl)',
    );
  }
  const passed = [
    ...args,
    ...(globals.output === 'json' ? ['--json'] : []),
    ...(globals.color ? [] : ['--no-color']),
  ];
  const io = cliIo();
  return new Promise((resolve, reject) => {
    // Run in-process with streams of its own (a test): the seeder's output goes to them.
    const own = isProcessIo(io);
    const child = spawn(process.execPath, [bin, ...passed], { stdio: own ? 'inherit' : 'pipe', env: io.env });
    if (!own) {
      child.stdout?.on('data', (d: Buffer) => io.stdout.write(d.toString()));
      child.stderr?.on('data', (d: Buffer) => io.stderr.write(d.toString()));
      child.stdin?.end();
    }
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
