import { spawn, spawnSync } from 'node:child_process';
import { freePort } from '@support-desk/platform/testing';
import { harness } from '@support-desk/identity/testing';
import type { Test } from 'tap';
import { DESKCTL, deskctl } from './helpers.js';

// What the deskctl command-line tests share (deskctl-cli*.test.ts): the real deskctl process, a
// terminal to run it on, and a store with an administrator and an agent to run it against.

export const ESC = '\u001b[';
/** util-linux `script` gives a command a real terminal (a pty); absent, the terminal tests skip. */
export const SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/**
 * Runs deskctl on a terminal; when it prints `prompt`, types `answer`. Returns what the terminal
 * showed and the exit code.
 */
export function onTerminal(env: Record<string, string>, args: string[], answer?: string) {
  return new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    const command = [process.execPath, DESKCTL, ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    let answered = false;
    child.stdout.on('data', (d) => {
      screen += d;
      if (answer !== undefined && !answered && screen.includes('[y/N]')) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

/**
 * The identity service on a real store and NATS, listening (so a user can sign in and consent
 * through the real forms), with `root@example.com` bootstrapped and the agent `ada@example.com`;
 * `run` and `json` run deskctl against it.
 */
export async function storeSession(t: Test) {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const h = await harness(t, { OAUTH_ISSUER: issuer });
  await h.app.listen({ port, host: '127.0.0.1' });
  const run = (args: string[], env: Record<string, string> = {}) => deskctl({ ...h.cliEnv, ...env }, args);
  const json = async (args: string[]) => {
    const r = await run([...args, '--json']);
    t.equal(r.code, 0, `${args.slice(0, 2).join(' ')}: ${r.stderr}`);
    return r.json;
  };
  const boot = await json(['bootstrap', '--email', 'root@example.com', '--name', 'Root']);
  const ada = await json([
    'users',
    'create',
    '--email',
    'ada@example.com',
    '--name',
    'Ada',
    '--role',
    'agent',
  ]);
  return { h, issuer, run, json, boot, ada };
}
