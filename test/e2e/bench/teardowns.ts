import type { Teardownable } from '../src/stack.js';

/** Teardown steps of a bench run (startStack wants tap's `t.teardown`; run in reverse at the end). */
export function teardowns(): Teardownable & { run(): Promise<void> } {
  const steps: (() => unknown)[] = [];
  return {
    teardown: (fn) => void steps.push(fn),
    async run() {
      for (const step of steps.reverse()) await step();
    },
  };
}
