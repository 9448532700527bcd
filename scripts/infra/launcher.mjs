// Starting and stopping one detached server process with a pidfile and a log (Redis, NATS, mongod,
// FerretDB; PostgreSQL has its own pg_ctl, see postgres.mjs).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { HOST, InfraError, ROOT, log, sleep, warn } from './common.mjs';
import { cmdlineOf, isAlive, livePidFromFile, readPid, tailFile, tcpCheck, waitFor } from './probes.mjs';

/** Starts `def` detached, or reuses it when it already answers on its port. */
export async function startServer(def, c) {
  const ownPid = livePidFromFile(def.pidFile, def.bin);
  if (await def.ready()) {
    log(
      `${def.name.padEnd(8)} ${def.url.padEnd(28)} already running${ownPid ? ` (pid ${ownPid})` : ' (reused)'}`,
    );
    return;
  }
  if (ownPid) {
    // Ours, but not answering yet (still starting?): give it the usual time.
    log(`${def.name.padEnd(8)} ${def.url.padEnd(28)} waiting for pid ${ownPid}...`);
    if (await waitFor(def.ready, { timeoutMs: c.timeoutMs })) return;
    throw new InfraError(
      `${def.name} (pid ${ownPid}) did not become ready within ${c.timeoutMs / 1000} s. Last lines of ${def.logFile}:\n${tailFile(def.logFile)}`,
    );
  }
  if (await tcpCheck(def.port)) {
    // Something answers on the port but is not healthy yet; wait, it may be starting.
    log(`${def.name.padEnd(8)} port ${def.port} is in use, waiting for it to become ready...`);
    if (await waitFor(def.ready, { timeoutMs: c.timeoutMs })) return;
    throw new InfraError(
      `port ${HOST}:${def.port} is in use by something that is not a ready ${def.name}; stop it or change SD_*_PORT`,
    );
  }

  fs.mkdirSync(def.dir, { recursive: true });
  const { bin, args } = def.command();
  if (!bin) throw new InfraError(`${def.bin} not found`);
  const fd = fs.openSync(def.logFile, 'a');
  fs.writeSync(fd, `\n--- ${new Date().toISOString()} starting: ${bin} ${args.join(' ')}\n`);
  let exited = null;
  let child;
  try {
    child = spawn(bin, args, {
      cwd: def.dir,
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...(def.env || {}) },
    });
  } finally {
    fs.closeSync(fd);
  }
  child.on('error', (err) => {
    exited = `could not start ${bin}: ${err.message}`;
  });
  child.on('exit', (code, signal) => {
    exited = `${def.name} exited during start-up (${signal ?? `code ${code}`})`;
  });
  child.unref();
  if (child.pid) fs.writeFileSync(def.pidFile, `${child.pid}\n`);
  log(
    `${def.name.padEnd(8)} ${def.url.padEnd(28)} starting (pid ${child.pid}, log ${path.relative(ROOT, def.logFile)})`,
  );

  let ok = false;
  try {
    ok = await waitFor(def.ready, { timeoutMs: c.timeoutMs, abort: () => exited });
    if (ok && def.settleMs) {
      // Make sure it stays up (e.g. FerretDB finishing its backend set-up), then check again.
      await sleep(def.settleMs);
      ok = await waitFor(def.ready, { timeoutMs: c.timeoutMs, abort: () => exited });
    }
  } catch (err) {
    fs.rmSync(def.pidFile, { force: true });
    throw new InfraError(`${err.message}. Last lines of ${def.logFile}:\n${tailFile(def.logFile)}`);
  }
  if (!ok) {
    await stopPid(child.pid, def.name, def.bin);
    fs.rmSync(def.pidFile, { force: true });
    throw new InfraError(
      `${def.name} did not become ready within ${c.timeoutMs / 1000} s. Last lines of ${def.logFile}:\n${tailFile(def.logFile)}`,
    );
  }
}

/** SIGTERM to the server's process group, SIGKILL after 10 s; false if it would not die. */
export async function stopPid(pid, name, binName) {
  const signalGroup = (sig) => {
    // detached => the server leads its own process group; signal the group, fall back to the pid.
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        // gone
      }
    }
  };
  if (!isAlive(pid)) return true;
  const cmd = cmdlineOf(pid);
  if (cmd && binName && !cmd.some((a) => path.basename(a).startsWith(binName))) return true; // pid reused
  signalGroup('SIGTERM');
  if (await waitFor(async () => !isAlive(pid), { timeoutMs: 10_000, intervalMs: 100 })) return true;
  warn(`${name} (pid ${pid}) did not stop after SIGTERM; sending SIGKILL`);
  signalGroup('SIGKILL');
  return waitFor(async () => !isAlive(pid), { timeoutMs: 5_000, intervalMs: 100 });
}

/**
 * Stops the servers of `defs` this script started (those with a pidfile), and removes their
 * directories (a cluster's state: the next start forms it afresh); anything else on their ports
 * is left alone. Throws when one would not stop.
 */
export async function stopOwnServers(defs, what) {
  let failed = false;
  for (const def of defs) {
    if (!readPid(def.pidFile)) {
      if (await tcpCheck(def.port)) log(`${def.name} not started by this script; leaving it`);
      continue;
    }
    const live = livePidFromFile(def.pidFile, def.bin);
    const ok = live ? await stopPid(live, def.name, def.bin) : true;
    if (ok) fs.rmSync(def.dir, { recursive: true, force: true });
    else failed = true;
    log(`${def.name.padEnd(8)} ${ok ? (live ? `stopped (pid ${live})` : 'not running') : 'FAILED to stop'}`);
  }
  if (failed) throw new InfraError(`some ${what} could not be stopped`);
}
