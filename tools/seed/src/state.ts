import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The seeder's progress, one JSON file per run: the run's size, each planned request's id and how
 * many of its steps are done, and the summary once finished. It makes a run resumable (an
 * interrupted run continues where it stopped) and idempotent (a finished run creates nothing
 * again). The file is named after the run id and the deployment it seeded (gateway, database,
 * NATS namespace), so two deployments never share progress.
 */
export interface RunProgress {
  runId: string;
  status: 'running' | 'finished';
  requests: number;
  attempts: number;
  startedAt: string;
  /** By plan index: the request created for it and the steps done. */
  done: Record<string, { requestId: string | null; step: number }>;
  summary: Record<string, unknown> | null;
}

export function stateFile(dir: string, runId: string, deployment: string[]): string {
  const where = createHash('sha256').update(deployment.join('\n')).digest('hex').slice(0, 16);
  return join(dir, `${runId}.${where}.json`);
}

export async function readProgress(file: string): Promise<RunProgress | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as RunProgress;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Saves progress atomically (write, then rename), one save at a time in call order. */
export function progressWriter(file: string) {
  let chain: Promise<void> = Promise.resolve();
  return (progress: RunProgress): Promise<void> => {
    const json = JSON.stringify(progress);
    chain = chain.then(async () => {
      await mkdir(join(file, '..'), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, json);
      await rename(tmp, file);
    });
    return chain;
  };
}
