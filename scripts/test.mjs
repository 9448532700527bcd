#!/usr/bin/env node
// `npm test`: install (if needed), build, start the local infrastructure, run the compiled tap tests.
//
//   npm test                                   all tests
//   npm test -- <file|dir> ...                 selected files (compiled .js; a test/**/*.test.ts source
//                                              path or a workspace folder is mapped to its dist/test files)
//   npm test -- --grep=<pattern> --jobs=1 ...  extra options are passed to tap (use the --opt=value form)
//
// Test files: <workspace>/test/**/*.test.ts, compiled by `tsc -b` to <workspace>/dist/test/**/*.test.js
// (libs/*, services/*, tools/*), plus root end-to-end tests compiled to test/**/dist/**/*.test.js or
// dist/test/**/*.test.js. Tests get MONGO_URL, NATS_URL, REDIS_URL (scripts/infra.mjs) and SD_TEST=1,
// plus CHROMIUM_PATH when /usr/bin/chromium exists.
//
// The LAST line printed is always `N passed, N failed`: tap's own assertion counts (the
// `# { total, pass, fail, ... }` summary of the run, taken from the raw TAP output). A file that fails
// without a failing assertion (crash, non-zero exit, timeout) counts as one failure, as in tap's summary;
// so does a failed `tsc -b` or a failed set-up step. Skipped and todo assertions are not counted in either
// number (they are listed on the line before). Exit code is non-zero if tap failed, anything failed, or
// no test ran. Infra keeps running afterwards unless SD_TEST_INFRA_DOWN=1.
// Chromium, jq, openssl, curl (browser tests, README walkthrough), slapd and ldap-utils (LDAP sync) are installed with apt when
// missing and running as root;
// SD_TEST_SKIP_CHROMIUM=1 skips that. The PyPI tools of the SCIM conformance and Schemathesis tests
// (scim2-tester, schemathesis) are installed into venvs in the data directory before the tests
// (scripts/test/python-tools.mjs).
// The run's raw TAP is kept in .tap/last-run.tap.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  aptInstall,
  buildTypeScript,
  down,
  ensureNodeModules,
  InfraError,
  isExternal,
  ROOT,
  up,
} from './infra.mjs';
import { findFerretDB } from './infra/ferretdb.mjs';
import { ensureNatsServer } from './infra/nats-server.mjs';
import { ensureCollector } from './test/otelcol.mjs';
import { ensurePythonTool, PYTHON_TOOLS } from './test/python-tools.mjs';
import { formatFailures, readTap } from './test/tap-report.mjs';
import { longestFirst, recordTimes } from './test/schedule.mjs';

const CHROMIUM = '/usr/bin/chromium';

/** Files at once, and each file's limit in seconds (the fault and replica files start several stacks). */
const RUN_DEFAULTS = { jobs: 2, timeoutSeconds: 600 };

function finish(passed, failed, code, note) {
  if (note) console.log(note);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code);
}

// ---------------------------------------------------------------------------------------------
// Test file selection

function walk(dir, out, filter) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out, filter);
    else if (e.isFile() && filter(p)) out.push(p);
  }
  return out;
}

const isTestJs = (p) => /\.test\.(js|mjs|cjs)$/.test(p);

function workspaces() {
  const out = [];
  for (const group of ['libs', 'services', 'tools']) {
    const dir = path.join(ROOT, group);
    let names = [];
    try {
      names = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
    } catch {
      // none
    }
    for (const e of names) out.push(path.join(dir, e.name));
  }
  return out;
}

function discoverAll() {
  const files = [];
  for (const ws of workspaces()) walk(path.join(ws, 'dist', 'test'), files, isTestJs);
  // Root end-to-end tests: test/<...>/dist/**/*.test.js or dist/test/**/*.test.js
  walk(path.join(ROOT, 'test'), files, (p) => isTestJs(p) && p.split(path.sep).includes('dist'));
  walk(path.join(ROOT, 'dist', 'test'), files, isTestJs);
  return [...new Set(files)].sort();
}

/** Maps a user argument (compiled file, .ts source, or folder) to compiled test files. */
function resolveSelection(arg) {
  const base = process.env.INIT_CWD || process.cwd();
  const abs = path.resolve(base, arg);
  const candidates = [abs, path.resolve(ROOT, arg)];
  for (const p of candidates) {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) {
      let files = walk(p, [], isTestJs).filter((f) => f.split(path.sep).includes('dist'));
      if (files.length === 0) files = walk(path.join(p, 'dist', 'test'), [], isTestJs);
      return files;
    }
    if (/\.tsx?$|\.mts$|\.cts$/.test(p)) {
      const mapped = mapSourceToDist(p);
      if (mapped) return [mapped];
    }
    return [p];
  }
  // A .ts source that has not been compiled yet, or a typo.
  const mapped = /\.(m|c)?tsx?$/.test(abs) ? mapSourceToDist(abs) : null;
  return mapped ? [mapped] : [abs];
}

function mapSourceToDist(tsFile) {
  const rel = path.relative(ROOT, tsFile).split(path.sep);
  const i = rel.lastIndexOf('test');
  if (i < 0) return null;
  const js = rel
    .slice(i)
    .join(path.sep)
    .replace(/\.(m|c)?tsx?$/, (_m, k) => `.${k || ''}js`);
  return path.join(ROOT, ...rel.slice(0, i), 'dist', js);
}

// ---------------------------------------------------------------------------------------------
// Main

/** Debian packages the tests use beyond the infrastructure: the browser tests, the README walkthrough, the fault tests. */
const TEST_TOOLS = [
  { pkg: 'chromium', path: CHROMIUM },
  { pkg: 'jq', path: '/usr/bin/jq' },
  { pkg: 'openssl', path: '/usr/bin/openssl' },
  { pkg: 'curl', path: '/usr/bin/curl' },
  // promtool checks and unit-tests deploy/observability's rules; prometheus scrapes the e2e stack.
  { pkg: 'prometheus', path: '/usr/bin/promtool' },
  // identity's LDAP directory sync is tested against a real OpenLDAP (startPrivateSlapd).
  { pkg: 'slapd', path: '/usr/sbin/slapd' },
  { pkg: 'ldap-utils', path: '/usr/bin/ldapmodify' },
  // deskctl's zsh completion script is run by a real zsh.
  { pkg: 'zsh', path: '/usr/bin/zsh' },
  // The clustered-profile fault test cuts a NATS server off from its peers with iptables inside
  // a network namespace of its own (libs/platform/src/testing/netns.ts).
  { pkg: 'iptables', path: '/usr/sbin/iptables' },
];

function ensureTestTools() {
  if (process.env.SD_TEST_SKIP_CHROMIUM === '1') return;
  const missing = TEST_TOOLS.filter((t) => !fs.existsSync(t.path)).map((t) => t.pkg);
  if (missing.length === 0) return;
  if (!(typeof process.getuid === 'function' && process.getuid() === 0)) {
    console.log(
      `note: missing ${missing.join(', ')} (sudo apt-get install ${missing.join(' ')}); the tests that need them will report it.`,
    );
    return;
  }
  console.log(`> installing ${missing.join(', ')} for the tests`);
  if (!aptInstall(missing)) {
    console.log('warning: could not install them; continuing (the tests that need them will report it).');
  }
}

/**
 * `--jobs=N`, `--timeout=S` and `--grep=<pattern>` (tap's TAP_GREP: only the subtests whose names
 * match, at every level) from the command line; anything else is refused.
 */
function runOptions(extraOptions) {
  const options = { ...RUN_DEFAULTS, grep: [] };
  for (const a of extraOptions) {
    const m = /^--(jobs|timeout|grep)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown option ${a} (npm test takes --jobs=N, --timeout=S, --grep=PATTERN)`);
    if (m[1] === 'grep') options.grep.push(m[2]);
    else if (!/^[1-9]\d*$/.test(m[2])) throw new Error(`${a}: a positive whole number, please`);
    else options[m[1] === 'jobs' ? 'jobs' : 'timeoutSeconds'] = Number(m[2]);
  }
  return options;
}

/** On a terminal, one line per file as it ends (the raw TAP is in .tap/last-run.tap). */
function fileLine(line) {
  const m = /^(not ok|ok) \d+ - (\S+)(?: # (\w+)[^#]*)?.*# time=([\d.]+)(ms|s)/.exec(line);
  if (!m) return null;
  const seconds = Number(m[4]) / (m[5] === 'ms' ? 1000 : 1);
  const mark = m[1] === 'ok' ? 'ok    ' : 'FAILED';
  return `${mark} ${seconds.toFixed(1).padStart(6)} s  ${m[2]}`;
}

/**
 * Runs the files with scripts/test/runner.mjs (longest first, `jobs` at a time) and saves the
 * raw TAP to rawFile. Without a terminal (CI) the raw TAP streams to stdout as well; on a
 * terminal one line per file.
 */
function runTests(files, options, env, rawFile) {
  const list = `${rawFile}.files.json`;
  fs.writeFileSync(
    list,
    JSON.stringify({ files, jobs: options.jobs, timeoutSeconds: options.timeoutSeconds }),
  );
  const raw = process.env.TAP === '1' || !process.stdout.isTTY;
  const runEnv = options.grep.length ? { ...env, TAP_GREP: options.grep.join('\n') } : env;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'test', 'runner.mjs'), list], {
      cwd: ROOT,
      env: runEnv,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const sink = fs.createWriteStream(rawFile);
    let pending = '';
    child.stdout.on('data', (chunk) => {
      sink.write(chunk);
      if (raw) {
        process.stdout.write(chunk);
        return;
      }
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const l of lines) {
        const shown = fileLine(l);
        if (shown) console.log(shown);
      }
    });
    const forward = (sig) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    let result = null;
    const done = () => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      fs.rmSync(list, { force: true });
      sink.end(() => resolve(result));
    };
    child.on('error', (err) => {
      console.error(`could not run the tests: ${err.message}`);
      result = 127;
      done();
    });
    child.on('close', (code, signal) => {
      if (result !== null) return;
      result = code ?? (signal ? 128 : 1);
      done();
    });
  });
}

/** Stops the run's shared stacks (each daemon drops its databases) and removes the pool. */
async function stopSharedStacks(pool) {
  const pids = [];
  for (const slot of fs.readdirSync(pool)) {
    try {
      const pid = Number(fs.readFileSync(path.join(pool, slot, 'daemon.pid'), 'utf8'));
      process.kill(pid, 'SIGTERM');
      pids.push(pid);
    } catch {
      // no daemon, or already gone
    }
  }
  const alive = (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 30_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  for (const pid of pids.filter(alive)) process.kill(-pid, 'SIGKILL');
  fs.rmSync(pool, { recursive: true, force: true });
}

async function main() {
  const argv = process.argv.slice(2).filter((a) => a !== '--');
  let options;
  try {
    options = runOptions(argv.filter((a) => a.startsWith('-')));
  } catch (err) {
    return finish(0, 1, 2, err.message);
  }
  const selection = argv.filter((a) => !a.startsWith('-'));
  let setupFailures = 0;
  const notes = [];

  try {
    ensureNodeModules();
  } catch (err) {
    console.error(`ERROR: ${err.message}`);
    return finish(0, 1, 1, 'set-up failed: dependencies could not be installed');
  }

  if (!buildTypeScript()) {
    setupFailures++;
    notes.push('`tsc -b` failed (counted as 1 failure); tests ran against whatever was emitted.');
  }

  let urls;
  try {
    urls = await up();
  } catch (err) {
    console.error(`ERROR: ${err instanceof InfraError ? err.message : err.stack || err}`);
    return finish(0, 1 + setupFailures, 1, 'set-up failed: local infrastructure could not be started');
  }

  ensureTestTools();

  const files = selection.length ? [...new Set(selection.flatMap(resolveSelection))] : discoverAll();
  const missing = files.filter((f) => !fs.existsSync(f));
  if (missing.length) {
    for (const f of missing) console.error(`test file not found: ${path.relative(ROOT, f) || f}`);
    return finish(
      0,
      missing.length + setupFailures,
      1,
      'some selected test files do not exist (did `tsc -b` emit them?)',
    );
  }
  // The tracing test exports to a real OpenTelemetry Collector, built from the Go module proxy
  // (about a minute on a fresh machine): before the tests, not inside one's time limit.
  if (files.some((f) => f.endsWith('tracing.test.js'))) {
    try {
      ensureCollector();
    } catch (err) {
      console.log(`warning: ${err.message}; the tracing test will report it.`);
    }
  }
  // The SCIM conformance and Schemathesis tests run PyPI tools from venvs (10-20 s each to install
  // on a fresh machine): likewise before the tests.
  for (const [name, { testFile }] of Object.entries(PYTHON_TOOLS)) {
    if (!files.some((f) => f.endsWith(testFile))) continue;
    try {
      ensurePythonTool(name);
    } catch (err) {
      console.log(`warning: ${err.message}; ${testFile} will report it.`);
    }
  }
  if (files.length === 0) {
    return finish(
      0,
      setupFailures,
      1,
      'no test files found (expected <workspace>/dist/test/**/*.test.js, compiled from <workspace>/test/**/*.test.ts)',
    );
  }

  // Tests that start a private NATS run the release the local stack runs.
  const env = {
    ...process.env,
    ...urls,
    SD_TEST: '1',
    NATS_SERVER_BIN: ensureNatsServer(),
    FERRETDB_BIN: process.env.FERRETDB_BIN || findFerretDB() || '',
  };
  if (!env.CHROMIUM_PATH && fs.existsSync(CHROMIUM)) env.CHROMIUM_PATH = CHROMIUM;
  const rawDir = path.join(ROOT, '.tap');
  fs.mkdirSync(rawDir, { recursive: true });
  // Written under this run's own name (two runs at once must not count each other's output), then
  // kept as .tap/last-run.tap.
  const rawFile = path.join(rawDir, `run-${process.pid}.tap`);
  fs.rmSync(rawFile, { force: true });

  console.log(`> tap (${files.length} test file${files.length === 1 ? '' : 's'})`);
  // Longest first (by this machine's last run): the slots of --jobs then end together.
  const rel = longestFirst(
    files.map((f) => {
      const r = path.relative(ROOT, f);
      return r.startsWith('..') ? f : r;
    }),
  );
  // The end-to-end files' shared stacks (test/e2e/src/stack-pool.ts): one slot per file at once.
  const pool = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-e2e-pool-'));
  Object.assign(env, {
    SD_E2E_POOL: pool,
    SD_E2E_POOL_OWNER: String(process.pid),
    SD_E2E_POOL_SLOTS: String(options.jobs),
  });
  let tapCode;
  try {
    tapCode = await runTests(rel, options, env, rawFile);
  } finally {
    await stopSharedStacks(pool);
  }

  let raw = '';
  try {
    raw = fs.readFileSync(rawFile, 'utf8');
    fs.renameSync(rawFile, path.join(rawDir, 'last-run.tap'));
  } catch {
    // tap did not write anything
  }
  recordTimes(raw);
  // The leaf assertions of every file, counted as tap's own summary counts them (the runner's
  // summary line counts its files).
  const tap = readTap(raw);
  const counts = tap.counts;
  const failureList = formatFailures(tap.failures);
  if (failureList) notes.push(failureList);

  if (process.env.SD_TEST_INFRA_DOWN === '1' && !isExternal()) {
    try {
      await down();
    } catch (err) {
      console.error(`warning: stopping infra failed: ${err.message}`);
    }
  }

  const failed = counts.fail + setupFailures;
  const ran = counts.total;
  if (counts.skip || counts.todo) notes.push(`(${counts.skip} skipped, ${counts.todo} todo)`);
  if (tapCode !== 0 && counts.fail === 0) notes.push(`tap exited with code ${tapCode}.`);
  if (ran === 0) notes.push('no test ran.');
  const code = tapCode !== 0 || failed > 0 || ran === 0 ? 1 : 0;
  return finish(counts.pass, failed, code, notes.join('\n'));
}

main().catch((err) => {
  console.error(err.stack || err);
  finish(0, 1, 1, 'internal error in scripts/test.mjs');
});
