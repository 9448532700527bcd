import { cliIo } from './io.js';

/** A command-line mistake: exit code 2, one line and a hint on stderr. */
export class UsageError extends Error {}

export function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** `30d`, `12h`, `90m`, `3600s`, `2w` → seconds (the shortest lifetime allowed is the use case's rule). */
export function parseDuration(value: string): number {
  const m = /^(\d{1,6})([smhdw])$/.exec(value.trim());
  if (!m) throw new UsageError(`--expires-in must look like 30d, 12h, 90m, 3600s or 2w (got "${value}")`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit;
}

export function positiveInt(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,7}$/.test(value) || Number(value) < 1) {
    throw new UsageError(`--${name} must be a positive integer`);
  }
  return Number(value);
}

export async function readStdin(): Promise<string> {
  const { stdin } = cliIo();
  if (stdin.isTTY) throw new UsageError('--password-stdin expects the password on standard input');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
