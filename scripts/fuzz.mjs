#!/usr/bin/env node
// `npm run fuzz`: the long Schemathesis run (issue 39). Every phase, at least 300 cases per
// operation, a random seed, on every operation of /openapi.json (the OAuth endpoints included),
// against a stack of its own: the suite's test file (test/e2e/test/schemathesis.test.ts) in its
// fuzz mode, run through `npm test`, which builds, starts the local infrastructure, installs the
// Schemathesis venv and starts the services on free ports with fresh databases, exactly as the
// e2e suite does (a running `npm start` is neither needed nor touched). A failure off the test's
// known list fails the run; the seed is printed first and with the result, so any run can be
// repeated: `npm run fuzz -- --seed <seed>`.
//
//   npm run fuzz                          a random seed, 300 cases per operation
//   npm run fuzz -- --seed 4242 --cases 400
//
// Environment: SD_FUZZ_SEED, SD_FUZZ_CASES (the same as the options), SD_FUZZ_TIMEOUT_S (the
// Schemathesis run's bound, default 7200 s), plus whatever `npm test` reads (SD_*_PORT, ...).

import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './infra.mjs';

const MIN_CASES = 300;
const { values } = parseArgs({
  options: { seed: { type: 'string' }, cases: { type: 'string' } },
  allowPositionals: false,
});
const seed = values.seed ?? process.env.SD_FUZZ_SEED ?? String(randomInt(1, 2 ** 31));
const cases = values.cases ?? process.env.SD_FUZZ_CASES ?? String(MIN_CASES);
const timeoutS = Number(process.env.SD_FUZZ_TIMEOUT_S || 7200);
if (!/^\d+$/.test(seed) || !/^\d+$/.test(cases) || Number(cases) < 1 || !(timeoutS > 0)) {
  console.error('usage: npm run fuzz -- [--seed <integer>] [--cases <integer per operation>]');
  process.exit(2);
}

console.log(
  `[fuzz] seed ${seed}, ${cases} cases per operation, every phase (repeat: npm run fuzz -- --seed ${seed})`,
);
const child = spawn(
  process.execPath,
  [
    path.join(ROOT, 'scripts/test.mjs'),
    'test/e2e/test/schemathesis.test.ts',
    // tap's bound on the file: the run's own, plus the stack's start and stop.
    `--timeout=${timeoutS + 600}`,
  ],
  {
    cwd: ROOT,
    stdio: 'inherit',
    env: {
      ...process.env,
      SD_FUZZ: '1',
      SD_FUZZ_SEED: seed,
      SD_FUZZ_CASES: cases,
      SD_FUZZ_TIMEOUT_S: String(timeoutS),
    },
  },
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  console.log(`[fuzz] seed ${seed}: ${code === 0 ? 'clean' : `failed (${signal ?? `exit ${code}`})`}`);
  process.exit(code ?? 1);
});
