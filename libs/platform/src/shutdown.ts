import type { Logger } from './logger.js';

export interface ShutdownStep {
  name: string;
  close: () => Promise<unknown>;
}

export interface GracefulShutdownOptions {
  logger: Logger;
  /** Run in order: typically mark draining, close HTTP (waits for in-flight), stop consumers/relay, drain NATS, close MongoDB. */
  steps: ShutdownStep[];
  timeoutMs: number;
  exit?: (code: number) => void;
}

/**
 * On SIGTERM/SIGINT runs the steps in order, bounded by `timeoutMs`; exits 0 when all
 * closed cleanly, 1 on error or timeout. A second signal does not start a second shutdown.
 */
export function installGracefulShutdown({
  logger,
  steps,
  timeoutMs,
  exit = process.exit,
}: GracefulShutdownOptions) {
  let started = false;
  const shutdown = async (signal: string) => {
    if (started) return;
    started = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, 'shutdown timed out; exiting');
      exit(1);
    }, timeoutMs);
    timer.unref();
    let code = 0;
    for (const step of steps) {
      try {
        await step.close();
      } catch (err) {
        code = 1;
        logger.error({ err, step: step.name }, 'shutdown step failed');
      }
    }
    clearTimeout(timer);
    logger.info('shutdown complete');
    exit(code);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return shutdown;
}
