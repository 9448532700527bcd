// Binaries, processes and readiness probes of the local servers.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { HOST, InfraError, sleep } from './common.mjs';

const EXTRA_BIN_DIRS = ['/usr/sbin', '/sbin', '/usr/local/sbin', '/usr/local/bin', '/usr/bin'];

export function isExecutable(p) {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Finds an executable on PATH, then in the sbin directories (Debian puts nats-server in /usr/sbin). */
export function findBinary(name) {
  const dirs = [...(process.env.PATH || '').split(path.delimiter).filter(Boolean), ...EXTRA_BIN_DIRS];
  for (const dir of dirs) {
    const p = path.join(dir, name);
    if (isExecutable(p)) return p;
  }
  return null;
}

/** Go: on PATH, else where the official tarball installs it. */
export function goBinary() {
  return findBinary('go') || (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null);
}

export function isAlive(pid) {
  if (!pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === 'EPERM';
  }
  // A zombie still "exists" for kill(0); treat it as dead.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
  } catch {
    // no /proc: trust kill(0)
  }
  return true;
}

export function cmdlineOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return null;
  }
}

export function readPid(pidFile) {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The pid from a pidfile, if that process is alive and still looks like the expected server. */
export function livePidFromFile(pidFile, binName) {
  const pid = readPid(pidFile);
  if (!pid || !isAlive(pid)) return null;
  const cmd = cmdlineOf(pid);
  // Guard against pid reuse: the process must still be the server we started.
  if (cmd && !cmd.some((a) => path.basename(a).startsWith(binName))) return null;
  return pid;
}

export function tailFile(file, lines = 30) {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no log file)';
  }
}

/** Resolves true if a TCP connection to host:port succeeds within timeoutMs. */
export function tcpCheck(port, host = HOST, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/** Sends `payload` and resolves with the reply bytes once `isComplete(buf)` says so (or null). */
function tcpExchange(port, host, payload, isComplete, timeoutMs = 2000) {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let settled = false;
    const sock = net.connect({ port, host });
    const done = (value) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      resolve(value);
    };
    sock.setTimeout(timeoutMs, () => done(null));
    sock.once('connect', () => sock.write(payload));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (isComplete(buf)) done(buf);
    });
    sock.once('error', () => done(null));
    sock.once('close', () => done(null));
  });
}

/** Redis: PING must answer +PONG (or -NOAUTH, which still proves it is Redis and up). */
export async function redisReady(port, host = HOST) {
  const reply = await tcpExchange(port, host, 'PING\r\n', (b) => b.includes('\r\n'));
  if (!reply) return false;
  const s = reply.toString('latin1');
  return s.startsWith('+PONG') || s.startsWith('-NOAUTH');
}

function httpGet(url, timeoutMs = 2000) {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode, body }));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** NATS: the monitoring endpoint reports healthy with JetStream enabled. */
export async function natsReady(monitorPort, host = HOST) {
  const r = await httpGet(`http://${host}:${monitorPort}/healthz?js-enabled-only=true`);
  return Boolean(r && r.status === 200 && /"status"\s*:\s*"ok"/.test(r.body));
}

/** MongoDB wire protocol: OP_MSG {hello: 1, $db: "admin"} and look for ok: 1 in the reply. */
function mongoHelloMessage() {
  const cstr = (s) => Buffer.from(`${s}\0`, 'utf8');
  const int32 = (n) => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    return b;
  };
  const elems = Buffer.concat([
    Buffer.from([0x10]),
    cstr('hello'),
    int32(1),
    Buffer.from([0x02]),
    cstr('$db'),
    int32(6),
    cstr('admin'),
  ]);
  const doc = Buffer.concat([int32(4 + elems.length + 1), elems, Buffer.from([0])]);
  const body = Buffer.concat([int32(0) /* flagBits */, Buffer.from([0]) /* section kind 0 */, doc]);
  const header = Buffer.concat([int32(16 + body.length), int32(1), int32(0), int32(2013)]);
  return Buffer.concat([header, body]);
}

export async function mongoReady(port, host = HOST) {
  const reply = await tcpExchange(
    port,
    host,
    mongoHelloMessage(),
    (b) => b.length >= 4 && b.length >= b.readInt32LE(0),
  );
  if (!reply || reply.length < 21 || reply.readInt32LE(12) !== 2013) return false;
  for (const [type, size] of [
    [0x01, 8],
    [0x10, 4],
  ]) {
    const marker = Buffer.from([type, 0x6f, 0x6b, 0x00]); // <type>"ok\0"
    const i = reply.indexOf(marker, 21);
    if (i >= 0 && i + 4 + size <= reply.length) {
      const v = size === 8 ? reply.readDoubleLE(i + 4) : reply.readInt32LE(i + 4);
      return v === 1;
    }
  }
  return false;
}

export async function waitFor(check, { timeoutMs, intervalMs = 250, abort }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    const why = abort?.();
    if (why) throw new InfraError(why);
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}
