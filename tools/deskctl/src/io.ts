import { AsyncLocalStorage } from 'node:async_hooks';

/** Where a deskctl run reads and writes: the process's own streams, or a caller's (in-process runs). */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
}

/** The process's streams, read lazily (touching process.stdin opens it). */
const processIo: CliIo = {
  get env() {
    return process.env;
  },
  get stdin() {
    return process.stdin;
  },
  get stdout() {
    return process.stdout;
  },
  get stderr() {
    return process.stderr;
  },
};

const scoped = new AsyncLocalStorage<CliIo>();

/**
 * The streams and environment of the run in progress. A run started with `withCliIo` (a test
 * running commands in its own process, several at once) has its own; the bin has the process's.
 */
export const cliIo = (): CliIo => scoped.getStore() ?? processIo;

export const withCliIo = <T>(io: CliIo, run: () => Promise<T>): Promise<T> => scoped.run(io, run);

/** Whether the run's streams are the process's own (a child process can then share them). */
export const isProcessIo = (io: CliIo) => io === processIo;
