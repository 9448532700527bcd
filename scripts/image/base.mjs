// The base images the Dockerfile builds on, made here with no registry: Debian from its mirror
// (debootstrap, minbase) plus the pinned Node from the npm registry (scripts/infra/node-runtime.mjs).
//   build base    Debian minbase + tini + ca-certificates + Node + npm: the Dockerfile's build
//                 stages (NODE_IMAGE), which run `npm ci` and `tsc`.
//   runtime base  only what `node` and the image's entry point load: the C and C++ runtime
//                 libraries, /bin/sh (dash), tini and the CA bundle, plus Node; no package manager,
//                 no shell tools, no npm (RUNTIME_IMAGE: the runtime stage runs no command).
// Both are kept as tarballs in the machine cache (scripts/infra/machine-cache.mjs), keyed by the
// Debian suite, the Node and npm versions and this recipe's revision, and imported into podman
// from there; a cluster imports the application image the same way (scripts/image.mjs --save).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InfraError, log } from '../infra/common.mjs';
import { cacheEntry, ensureCacheEntry } from '../infra/machine-cache.mjs';
import { cachedNode, pinnedVersion } from '../infra/node-runtime.mjs';
import { findBinary } from '../infra/probes.mjs';
import { imageExists, podman } from './podman.mjs';

export const DEBIAN_SUITE = 'bookworm';
/** Bump when the recipe below changes what goes into a base (a new cache entry, a new tag). */
const RECIPE = 'r2';
const MIRROR = () => process.env.SD_DEBIAN_MIRROR || 'http://deb.debian.org/debian';

/**
 * Debian packages node and /bin/sh need at run time (`ldd node`: libatomic, libstdc++); tini comes
 * from the Dockerfile's build stage.
 */
const RUNTIME_PACKAGES = [
  'libc6',
  'libgcc-s1',
  'libstdc++6',
  'libatomic1',
  'dash',
  'ca-certificates',
  'netbase',
  'base-files',
];
/**
 * Left out of the runtime base: documentation, manual pages, translations, and glibc's iconv
 * modules (8 MB; Node converts text with ICU, never iconv).
 */
const DROPPED =
  /^\.?\/?(usr\/share\/(doc|man|info|locale|lintian|bug)|(usr\/)?lib\/[^/]+-linux-gnu\/gconv)\//;

const PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The machine's own certificate authorities (Debian's place for local ones): a machine behind a
 * TLS-inspecting proxy trusts its CA there, and `npm ci` in the build stages must too. They go
 * into the build base only (never the runtime image), and their hash into its key.
 */
const LOCAL_CA_DIR = '/usr/local/share/ca-certificates';
function localCAs() {
  if (!fs.existsSync(LOCAL_CA_DIR)) return [];
  return fs
    .readdirSync(LOCAL_CA_DIR)
    .filter((f) => f.endsWith('.crt'))
    .sort()
    .map((f) => path.join(LOCAL_CA_DIR, f));
}
function localCAsHash() {
  const hash = createHash('sha256');
  for (const f of localCAs()) hash.update(path.basename(f)).update(fs.readFileSync(f));
  return hash.digest('hex').slice(0, 8);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...opts });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
    throw new InfraError(`${cmd} ${args.join(' ')} failed (${why})\n${(r.stderr ?? '').slice(-4000)}`.trim());
  }
  return r.stdout ?? '';
}

/** The npm the build base carries: the one this machine runs `npm ci` with (same lockfile rules). */
export function npmVersion() {
  const v = run('npm', ['--version']).trim();
  if (!/^\d+\.\d+\.\d+$/.test(v)) throw new InfraError(`npm --version printed "${v}"`);
  return v;
}

/** The bases' tags: what they hold, so a changed pin gives a new tag and cache entry. */
export function baseTags(node = pinnedVersion(), npm = npmVersion()) {
  const key = `${DEBIAN_SUITE}-node${node}-npm${npm}-ca${localCAsHash()}-${RECIPE}`;
  return {
    key,
    build: `localhost/support-desk/node-build:${key}`,
    runtime: `localhost/support-desk/node-runtime:${key}`,
  };
}

/**
 * Node (and for the build base npm) into a root file system's /usr/local. The runtime base's copy
 * is stripped of its debug symbols when binutils' `strip` is here (150 MB to 117 MB): a crash
 * still prints JavaScript stacks; native symbols are for a debugging build, not the image.
 */
function addNode(rootfs, npm) {
  const nodeBinary = cachedNode(pinnedVersion());
  const target = path.join(rootfs, 'usr/local/bin/node');
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(nodeBinary, target);
  fs.chmodSync(target, 0o755);
  if (!npm) {
    if (findBinary('strip')) run('strip', [target]);
    else log('strip (binutils) is not installed: the runtime base keeps Node with its symbols');
    return;
  }
  const lib = path.join(rootfs, 'usr/local/lib/node_modules/npm');
  fs.mkdirSync(lib, { recursive: true });
  const packed = JSON.parse(
    run('npm', ['pack', `npm@${npm}`, '--json', '--pack-destination', lib], { cwd: lib }),
  );
  const tarball = path.join(lib, packed[0].filename);
  run('tar', ['-xzf', tarball, '-C', lib, '--strip-components=1']);
  fs.rmSync(tarball);
  for (const tool of ['npm', 'npx'])
    fs.symlinkSync(`../lib/node_modules/npm/bin/${tool}-cli.js`, path.join(rootfs, `usr/local/bin/${tool}`));
}

/** The files of the runtime packages, read from the debootstrapped system's dpkg database. */
function runtimeFileList(rootfs) {
  const info = path.join(rootfs, 'var/lib/dpkg/info');
  const files = new Set();
  for (const pkg of RUNTIME_PACKAGES) {
    const list = [
      `${pkg}:amd64.list`,
      `${pkg}.list`,
      `${pkg}:${process.arch === 'arm64' ? 'arm64' : 'amd64'}.list`,
    ]
      .map((f) => path.join(info, f))
      .find((f) => fs.existsSync(f));
    if (!list) throw new InfraError(`debootstrap did not install ${pkg}`);
    for (const line of fs.readFileSync(list, 'utf8').split('\n')) {
      const rel = line.replace(/^\//, '');
      if (rel && rel !== '.' && !DROPPED.test(rel)) files.add(rel);
    }
  }
  // What a maintainer script made: the CA bundle and its links.
  files.add('etc/ssl/certs');
  for (const f of fs.readdirSync(path.join(rootfs, 'etc/ssl/certs'))) files.add(`etc/ssl/certs/${f}`);
  return [...files].sort();
}

/** The runtime base's root file system: the runtime packages' files, Node, users and /tmp. */
function makeRuntimeRootfs(rootfs, out) {
  fs.mkdirSync(out, { recursive: true });
  // Merged /usr: /bin, /lib, … are links into /usr, made before any file goes through them.
  const links = fs.readdirSync(rootfs).filter((e) => fs.lstatSync(path.join(rootfs, e)).isSymbolicLink());
  for (const link of links) {
    const target = fs.readlinkSync(path.join(rootfs, link));
    fs.mkdirSync(path.join(out, target), { recursive: true });
    fs.symlinkSync(target, path.join(out, link));
  }
  const listFile = path.join(out, '..', 'runtime-files.txt');
  fs.writeFileSync(listFile, runtimeFileList(rootfs).join('\n'));
  run('sh', [
    '-c',
    `tar -C "$1" -cf - --no-recursion -T "$2" | tar -C "$3" --keep-directory-symlink -xf -`,
    'sh',
    rootfs,
    listFile,
    out,
  ]);
  fs.rmSync(listFile);
  addNode(out, null);
  for (const dir of ['tmp', 'etc', 'root', 'app']) fs.mkdirSync(path.join(out, dir), { recursive: true });
  fs.chmodSync(path.join(out, 'tmp'), 0o1777);
  fs.chmodSync(path.join(out, 'root'), 0o700);
  // The image's user (the Dockerfile's USER, the chart's runAsUser) has a name and a home.
  fs.writeFileSync(
    path.join(out, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\napp:x:10001:10001::/tmp:/usr/sbin/nologin\n',
  );
  fs.writeFileSync(path.join(out, 'etc/group'), 'root:x:0:\napp:x:10001:\n');
  fs.writeFileSync(path.join(out, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
}

/** Makes both bases' tarballs in `dir` (a fresh cache entry). Root only: debootstrap needs it. */
function makeBases(dir, npm) {
  const rootfs = path.join(dir, 'rootfs');
  const started = Date.now();
  log(`debootstrap ${DEBIAN_SUITE} (minbase + tini, ca-certificates) from ${MIRROR()}`);
  run(
    'debootstrap',
    [
      '--variant=minbase',
      '--include=tini,ca-certificates,libatomic1,netbase',
      DEBIAN_SUITE,
      rootfs,
      MIRROR(),
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  log(`  done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const runtime = path.join(dir, 'runtime-rootfs');
  makeRuntimeRootfs(rootfs, runtime);
  addNode(rootfs, npm);
  const cas = localCAs();
  if (cas.length) {
    for (const f of cas)
      fs.copyFileSync(f, path.join(rootfs, 'usr/local/share/ca-certificates', path.basename(f)));
    run('chroot', [rootfs, 'update-ca-certificates'], { stdio: ['ignore', 'ignore', 'pipe'] });
  }
  // Nothing the build needs: apt's downloads and lists, documentation.
  for (const sub of [
    'var/cache/apt/archives',
    'var/lib/apt/lists',
    'usr/share/doc',
    'usr/share/man',
    'usr/share/locale',
  ])
    run('sh', ['-c', `rm -rf "$1"/${sub}/*`, 'sh', rootfs]);
  run('tar', ['-C', rootfs, '--numeric-owner', '-cf', path.join(dir, 'build.tar'), '.']);
  run('tar', ['-C', runtime, '--numeric-owner', '-cf', path.join(dir, 'runtime.tar'), '.']);
  fs.rmSync(rootfs, { recursive: true, force: true });
  fs.rmSync(runtime, { recursive: true, force: true });
}

/** Both bases present in podman: imported from the machine cache, made first when missing. */
export function ensureBaseImages() {
  const npm = npmVersion();
  const tags = baseTags(pinnedVersion(), npm);
  if (imageExists(tags.build) && imageExists(tags.runtime)) return tags;
  const dir = cacheEntry('image-base', tags.key);
  if (!fs.existsSync(dir)) {
    if (process.getuid?.() !== 0)
      throw new InfraError(
        'making the base images runs debootstrap, which needs root (or a machine cache that has them)',
      );
    const started = Date.now();
    ensureCacheEntry(dir, (tmp) => makeBases(tmp, npm));
    log(`base images made in ${((Date.now() - started) / 1000).toFixed(0)} s: ${dir}`);
  }
  const changes = ['--change', `ENV PATH=${PATH_ENV}`, '--change', 'CMD ["node"]'];
  // Node (npm) trusts the system bundle, local CAs included, beside its own.
  const buildChanges = ['--change', 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'];
  for (const [tag, file, extra] of [
    [tags.build, 'build.tar', buildChanges],
    [tags.runtime, 'runtime.tar', []],
  ]) {
    if (imageExists(tag)) continue;
    log(`podman import ${path.join(dir, file)} ${tag}`);
    podman(['import', ...changes, ...extra, path.join(dir, file), tag]);
  }
  return tags;
}
