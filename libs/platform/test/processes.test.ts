import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { cpuSecondsBetween, processMeter, TICKS_PER_SECOND } from '../src/testing/index.js';

// The benches' meter, through its public functions: a process found by an infra pidfile under the
// root it is given counts in that group, with its children, and its CPU shows between readings.
t.test(
  'processMeter counts the CPU of an infra pidfile’s process and its children',
  { skip: process.platform !== 'linux' && 'it reads /proc' },
  async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-meter-'));
    t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
    // A parent that starts a child burning CPU for a bounded time, then both wait to be killed.
    const burner = spawn(
      process.execPath,
      [
        '-e',
        `const { spawn } = require('node:child_process');
       spawn(process.execPath, ['-e', 'const end = Date.now() + 1500; while (Date.now() < end); setInterval(() => {}, 1000)'], { stdio: 'ignore' });
       setInterval(() => {}, 1000);`,
      ],
      { stdio: 'ignore', detached: true },
    );
    t.teardown(() => process.kill(-burner.pid!, 'SIGKILL'));
    fs.mkdirSync(path.join(root, '.data/redis'), { recursive: true });
    fs.writeFileSync(path.join(root, '.data/redis/redis.pid'), `${burner.pid}\n`);

    const meter = processMeter(root);
    const before = meter.read();
    // Until the child's burn shows (bounded: 40 readings, 100 ms apart).
    let after = meter.read();
    for (let i = 0; i < 40 && (after.ticks.get('redis') ?? 0) - (before.ticks.get('redis') ?? 0) < 30; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = meter.read();
    }
    const redis = cpuSecondsBetween(before, after).find(([group]) => group === 'redis');
    t.ok(
      redis && redis[1] >= 30 / TICKS_PER_SECOND,
      `the child's burn counts in the pidfile's group (${redis?.[1]} s)`,
    );
    t.ok((after.rssBytes.get('redis') ?? 0) > 10 * 1024 * 1024, 'both processes are resident in the group');
    t.notOk(after.ticks.has('nats'), 'a group without a pidfile is not there');
  },
);
