// The machine cache: what the scripts build or download once per machine (the pinned Node,
// FerretDB, nats-server, the deployment checkers, the OpenTelemetry Collector, the Python tools),
// kept outside any clone so that a clean clone on a machine that ran the scripts before reuses
// them. Every entry lives in a directory named by what it is and its version (or a hash of its
// pins), so a changed pin makes a new entry and never reuses a stale one.
//   SD_CACHE_DIR   the cache's root (default $XDG_CACHE_HOME/support-desk, else ~/.cache/support-desk)
// Nothing here needs node_modules: it runs before `npm ci`, under any Node the machine has.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function cacheRoot(env = process.env) {
  if (env.SD_CACHE_DIR) return path.resolve(env.SD_CACHE_DIR);
  const base = env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(os.homedir(), '.cache');
  return path.join(base, 'support-desk');
}

/** The directory of one cache entry, e.g. cacheEntry('ferretdb', 'v1.24.2'). */
export const cacheEntry = (kind, key) => path.join(cacheRoot(), kind, key);

/**
 * Returns `dir` once `fill(tmpDir)` has produced it: when it exists it is reused as is; else
 * `fill` writes into a fresh sibling directory that is renamed into place when it returns, so an
 * interrupted build leaves no half entry, and two processes filling the same entry at once both
 * end with a complete one (the second rename loses and its copy is removed).
 */
export function ensureCacheEntry(dir, fill) {
  if (fs.existsSync(dir)) return dir;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const tmp = fs.mkdtempSync(`${dir}.partial-`);
  try {
    fill(tmp);
    try {
      fs.renameSync(tmp, dir);
    } catch (err) {
      if (!fs.existsSync(dir)) throw err;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}
