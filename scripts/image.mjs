#!/usr/bin/env node
// `npm run image`: builds the repository's Dockerfile with podman on a machine that reaches no image
// registry. The bases come from Debian packages and the npm registry (scripts/image/base.mjs); the
// application image is tagged by a hash of the build context, kept in the machine cache as a
// docker-archive (what `podman load` and a cluster's `ctr -n k8s.io images import` read), and
// reused by every clone whose context hashes the same: a second run takes seconds.
//
//   npm run image                       build (or reuse) and tag localhost/support-desk:local
//   npm run image -- --print            print the image's tag only (for scripts and tests)
//   npm run image -- --save <file>      also write the image as a docker-archive to <file>
//
// Installs podman, runc and debootstrap with apt-get when missing (root). SD_DEBIAN_MIRROR picks
// the Debian mirror; SD_CACHE_DIR the machine cache (scripts/infra/machine-cache.mjs).
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { InfraError, ROOT } from './infra/common.mjs';
import { cacheEntry, ensureCacheEntry } from './infra/machine-cache.mjs';
import { ensureBaseImages } from './image/base.mjs';
import { ensureImageTools, imageExists, podman } from './image/podman.mjs';

export const IMAGE = 'localhost/support-desk';
export const LOCAL_TAG = `${IMAGE}:local`;
/** Application images kept in the machine cache (the newest by use; about 100 MB each). */
const KEEP = 3;

const say = (msg) => console.error(`[image] ${msg}`);

/**
 * .dockerignore as a predicate (the forms it uses: a name, a directory's entries with a trailing
 * star, a name in any directory with a leading double star, an exception with a leading !; the
 * last matching line wins), so the hash covers what the build context holds.
 */
function dockerignored() {
  const rules = fs
    .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const glob = l.replace(/^!/, '').replace(/^\//, '');
      const body = glob
        .split('/')
        .map((part) =>
          part === '**' ? '(?:.*)' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'),
        )
        .join('/')
        .replace('(?:.*)/', '(?:.*/)?');
      return { negate, re: new RegExp(`^${body}(?:/.*)?$`) };
    });
  return (file) => rules.reduce((ignored, r) => (r.re.test(file) ? !r.negate : ignored), false);
}

/** The files the build reads: what git tracks or would track (its ignores hold dist, .data …) but .dockerignore leaves out. */
export function contextFiles() {
  const ignored = dockerignored();
  const r = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new InfraError(`git ls-files failed: ${r.stderr}`);
  return (
    r.stdout
      .split('\0')
      .filter(Boolean)
      // The Dockerfile and .dockerignore stay out of the context but shape the image.
      .filter(
        (f) =>
          (!ignored(f) || f === 'Dockerfile' || f === '.dockerignore') && fs.existsSync(path.join(ROOT, f)),
      )
      .sort()
  );
}

/** A hash of the build context and the bases it builds on: the image's tag. */
export function contextHash(baseKey) {
  const hash = createHash('sha256').update(`${baseKey}\0`);
  for (const file of contextFiles()) {
    const stat = fs.lstatSync(path.join(ROOT, file));
    const body = stat.isSymbolicLink()
      ? fs.readlinkSync(path.join(ROOT, file))
      : fs.readFileSync(path.join(ROOT, file));
    hash.update(`${file}\0${stat.mode & 0o111 ? 'x' : '-'}\0${body.length}\0`).update(body);
  }
  return hash.digest('hex').slice(0, 16);
}

/** Drops all but the KEEP most recently used application images from the machine cache. */
function pruneCache(keep) {
  const dir = path.dirname(cacheEntry('image-app', 'x'));
  const entries = fs
    .readdirSync(dir)
    .filter((e) => !e.includes('.partial-') && e !== keep)
    .map((e) => ({ e, t: fs.statSync(path.join(dir, e)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { e } of entries.slice(KEEP - 1)) fs.rmSync(path.join(dir, e), { recursive: true, force: true });
  // podman keeps the same images (and their layers) as the cache does, no more.
  const kept = new Set(fs.readdirSync(dir));
  const tags = podman(['images', '--format', '{{.Repository}}:{{.Tag}}', IMAGE]).stdout.split('\n');
  for (const t of tags.filter((t) => /^localhost\/support-desk:[0-9a-f]{16}$/.test(t)))
    if (!kept.has(t.split(':')[1])) podman(['rmi', t], { allowFail: true });
}

function build(tag, bases) {
  // A private registry's token reaches `npm ci` only as a secret mount (never a layer).
  const npmrc = path.join(os.homedir(), '.npmrc');
  const empty = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sd-image-')), 'npmrc');
  fs.writeFileSync(empty, '', { mode: 0o600 });
  const started = Date.now();
  say(`podman build ${tag} (bases ${bases.build}, ${bases.runtime})`);
  try {
    podman(
      [
        'build',
        '--pull=never',
        '--layers',
        '--build-arg',
        `NODE_IMAGE=${bases.build}`,
        '--build-arg',
        `RUNTIME_IMAGE=${bases.runtime}`,
        '--secret',
        `id=npmrc,src=${fs.existsSync(npmrc) ? npmrc : empty}`,
        '--tag',
        tag,
        ROOT,
      ],
      { inherit: true },
    );
  } finally {
    fs.rmSync(path.dirname(empty), { recursive: true, force: true });
  }
  say(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** The application image for this tree: loaded from the machine cache, or built and cached. */
export function ensureImage() {
  ensureImageTools();
  const bases = ensureBaseImages();
  const hash = contextHash(bases.key);
  const tag = `${IMAGE}:${hash}`;
  const entry = cacheEntry('image-app', hash);
  const archive = path.join(entry, 'image.tar');
  if (!imageExists(tag)) {
    if (fs.existsSync(archive)) {
      say(`podman load ${archive}`);
      podman(['load', '--input', archive]);
    } else {
      build(tag, bases);
    }
  }
  ensureCacheEntry(entry, (tmp) => {
    podman(['save', '--format', 'docker-archive', '--output', path.join(tmp, 'image.tar'), tag]);
  });
  const now = new Date();
  fs.utimesSync(entry, now, now);
  pruneCache(hash);
  podman(['tag', tag, LOCAL_TAG]);
  return { tag, archive, bases };
}

/** The image's size as podman reports it (uncompressed layers), in bytes. */
export function imageSize(tag) {
  const out = podman(['image', 'inspect', '--format', '{{.Size}}', tag]).stdout.trim();
  return Number(out);
}

async function main() {
  const { values } = parseArgs({ options: { print: { type: 'boolean' }, save: { type: 'string' } } });
  const started = Date.now();
  const { tag, archive } = ensureImage();
  if (values.save) fs.copyFileSync(archive, path.resolve(values.save));
  if (values.print) {
    console.log(tag);
    return;
  }
  const mb = (imageSize(tag) / 1e6).toFixed(0);
  const archiveMb = (fs.statSync(archive).size / 1e6).toFixed(0);
  say(`${tag} (also ${LOCAL_TAG}): ${mb} MB, ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  say(`docker-archive in the machine cache: ${archive} (${archiveMb} MB)`);
  if (values.save) say(`saved to ${path.resolve(values.save)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    say(err instanceof InfraError ? err.message : (err.stack ?? String(err)));
    process.exit(1);
  });
}
