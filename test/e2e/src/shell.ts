import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';

/** The `sh` fenced blocks under a `## Walkthrough` heading (up to the next level-2 heading). */
function walkthroughBlocks(markdown: string): string[] | null {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^##\s+Walkthrough\s*$/i.test(l));
  if (start < 0) return null;
  let end = lines.findIndex((l, i) => i > start && /^##\s/.test(l));
  if (end < 0) end = lines.length;
  const section = lines.slice(start + 1, end).join('\n');
  const blocks: string[] = [];
  for (const m of section.matchAll(/^```sh[ \t]*\n([\s\S]*?)^```[ \t]*$/gm)) blocks.push(m[1]);
  return blocks;
}

/** The `sh` blocks of README.md's walkthrough. */
export function loadWalkthrough(root: string): { source: string; blocks: string[] } {
  const file = path.join(root, 'README.md');
  return { source: 'README.md', blocks: walkthroughBlocks(fs.readFileSync(file, 'utf8')) ?? [] };
}

/** Each `curl` invocation's first argument (the option cluster) in a shell text. */
export function curlInvocations(script: string): string[] {
  return [...script.matchAll(/(?:^|[\s$(|;&])curl\s+(\S+)/g)].map((m) => m[1]);
}

export interface BlockResult {
  status: number;
  stdout: string;
  stderr: string;
  /** HTTP status of every transfer curl made (from the -w wrapper). */
  curlCodes: { code: number; url: string }[];
  /** Commands that failed (from the ERR trap). */
  failures: string[];
}

/**
 * One long-lived bash session: blocks run in it in order, so variables carry over as they do
 * for a reader pasting them into a terminal. `pipefail` and an ERR trap report every failing
 * command; a `curl` wrapper reports every transfer's HTTP status on stderr.
 */
export class BashSession {
  private readonly child: ChildProcess;
  /** Commands go in through a FIFO, so the commands themselves read /dev/null and never eat the script. */
  private readonly script: Writable;
  private readonly dir: string;
  private out = '';
  private err = '';
  private serial = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-e2e-sh-'));
    const fifo = path.join(this.dir, 'script');
    execFileSync('mkfifo', [fifo]);
    this.child = spawn('bash', ['--noprofile', '--norc', fifo], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.script = fs.createWriteStream(fifo);
    this.child.stdout?.on('data', (c) => (this.out += c));
    this.child.stderr?.on('data', (c) => (this.err += c));
    this.script.write(
      [
        'set -o pipefail -E',
        `trap 'echo "__SD_FAIL__ status=$? command=$BASH_COMMAND" >&2' ERR`,
        `curl() { command curl -w '%{stderr}__SD_CURL__ %{http_code} %{url_effective}\\n' "$@"; }`,
        '',
      ].join('\n'),
    );
  }

  private async waitFor(marker: RegExp, which: 'out' | 'err', timeoutMs: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = marker.exec(which === 'out' ? this.out : this.err);
      if (m) return m;
      if (this.child.exitCode !== null)
        throw new Error(`bash exited (${this.child.exitCode})\n${this.err.slice(-2000)}`);
      if (Date.now() > deadline)
        throw new Error(`block did not finish within ${timeoutMs} ms\n${this.err.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async run(script: string, timeoutMs = 90_000): Promise<BlockResult> {
    const n = ++this.serial;
    this.out = '';
    this.err = '';
    this.script.write(
      `${script}\nprintf '\\n__SD_DONE_${n}__ %s\\n' "$?"\nprintf '__SD_DONE_${n}__\\n' >&2\n`,
    );
    const m = await this.waitFor(new RegExp(`__SD_DONE_${n}__ (\\d+)\\n`), 'out', timeoutMs);
    await this.waitFor(new RegExp(`__SD_DONE_${n}__\\n`), 'err', 5000);
    const stdout = this.out.slice(0, m.index);
    const stderr = this.err.replace(new RegExp(`__SD_DONE_${n}__\\n`), '');
    const curlCodes = [...stderr.matchAll(/__SD_CURL__ (\d{3}) (\S*)/g)].map((c) => ({
      code: Number(c[1]),
      url: c[2],
    }));
    const failures = [...stderr.matchAll(/__SD_FAIL__ ([^\n]*)/g)].map((f) => f[1]);
    return { status: Number(m[1]), stdout, stderr, curlCodes, failures };
  }

  /** The value of a shell variable in the session. */
  async variable(name: string): Promise<string> {
    if (!/^[A-Za-z_]\w*$/.test(name)) throw new Error(`bad variable name ${name}`);
    const r = await this.run(`printf '%s' "\${${name}:-}"`);
    return r.stdout.replace(/\n$/, '');
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const gone = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.script.end('exit 0\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Single-quotes a value for bash. */
export const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
