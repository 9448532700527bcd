#!/usr/bin/env node
// Runs one of the project's scripts under the project's Node (the version `.nvmrc` pins; see
// scripts/infra/node-runtime.mjs), whatever Node started it. Every npm script goes through here,
// so `npm start`, `npm test`, the benches and deskctl run the pinned Node on a machine that ships
// another one, and so does everything they start: the pinned Node's directory leads PATH (npm,
// tap and `#!/usr/bin/env node` tools find it) and children are spawned with process.execPath.
//
//   node scripts/node.mjs [--quiet] <script> [args...]   run <script> under the project's Node
//   node scripts/node.mjs --bin-dir                      print that Node's directory (for PATH)
//
// It prints the Node in use on stderr first (`--quiet` leaves that out, for deskctl's output).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectNode } from './infra/node-runtime.mjs';

const args = process.argv.slice(2);
const quiet = args[0] === '--quiet';
if (quiet) args.shift();

let node;
try {
  node = projectNode();
} catch (err) {
  console.error(`[node] ${err.message}`);
  process.exit(1);
}
const binDir = path.dirname(node.binary);

if (args[0] === '--bin-dir') {
  console.log(binDir);
  process.exit(0);
}
if (!args[0]) {
  console.error('usage: node scripts/node.mjs [--quiet] <script> [args...] | --bin-dir');
  process.exit(2);
}
if (!quiet) console.error(`[node] ${node.version} (${node.source})`);
process.env.PATH = [binDir, process.env.PATH].filter(Boolean).join(path.delimiter);

const script = path.resolve(args[0]);
if (node.binary === process.execPath) {
  // Already the right Node: run the script in this process, as if it had been started directly.
  process.argv = [process.execPath, script, ...args.slice(1)];
  await import(pathToFileURL(script).href);
} else {
  const child = spawn(node.binary, [script, ...args.slice(1)], { stdio: 'inherit' });
  // Ctrl-C reaches the whole process group, the child included: it decides how to stop.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    console.error(`[node] could not start ${node.binary}: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}
