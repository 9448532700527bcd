// The cluster's own images, made with no registry: each command of deploy/cluster/images (a
// static Go binary) alone in an OCI image (one layer, no base), packed as an OCI layout tarball
// in the machine cache (keyed by a hash of the sources and the Go version) and imported into the
// cluster's containerd with `ctr images import`.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../infra/common.mjs';
import { cacheEntry, ensureCacheEntry } from '../infra/machine-cache.mjs';

const SOURCES = path.join(ROOT, 'deploy', 'cluster', 'images');

/**
 * name → how the image runs. The sandbox runs as nobody; the web server as the chart's user
 * 10001, so the restricted Pod Security Standard admits it.
 */
const IMAGES = {
  pause: { user: '65535:65535', env: [] },
  echo: { user: '10001:10001', env: ['PORT=8080'] },
};

const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');

function sourcesKey() {
  const hash = crypto.createHash('sha256');
  const walk = (dir) => {
    for (const entry of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else hash.update(`${path.relative(SOURCES, p)}\0`).update(fs.readFileSync(p));
    }
  };
  walk(SOURCES);
  hash.update(execFileSync('go', ['version'], { encoding: 'utf8' }));
  return hash.digest('hex').slice(0, 12);
}

/** Writes a one-layer OCI layout for `binary` under `work` and packs it as `tarball`. */
function packImage(name, binary, ref, tarball, work) {
  const rootfs = path.join(work, `${name}-rootfs`);
  fs.mkdirSync(rootfs);
  fs.copyFileSync(binary, path.join(rootfs, name));
  fs.chmodSync(path.join(rootfs, name), 0o755);
  const tarFlags = ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner'];
  const layerFile = path.join(work, `${name}-layer.tar`);
  execFileSync('tar', [...tarFlags, '-C', rootfs, '-cf', layerFile, name]);
  const layer = fs.readFileSync(layerFile);
  const layerDigest = sha256(layer);

  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Entrypoint: [`/${name}`], User: IMAGES[name].user, Env: IMAGES[name].env },
      rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: `sha256:${sha256(config)}`,
        size: config.length,
      },
      layers: [
        {
          mediaType: 'application/vnd.oci.image.layer.v1.tar',
          digest: `sha256:${layerDigest}`,
          size: layer.length,
        },
      ],
    }),
  );
  const layout = path.join(work, `${name}-layout`);
  const blobs = path.join(layout, 'blobs', 'sha256');
  fs.mkdirSync(blobs, { recursive: true });
  for (const blob of [layer, config, manifest]) fs.writeFileSync(path.join(blobs, sha256(blob)), blob);
  fs.writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  fs.writeFileSync(
    path.join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: `sha256:${sha256(manifest)}`,
          size: manifest.length,
          // containerd names the imported image from the first; other tools read the second.
          annotations: {
            'io.containerd.image.name': ref,
            'org.opencontainers.image.ref.name': ref.split(':').pop(),
          },
        },
      ],
    }),
  );
  execFileSync('tar', [...tarFlags, '-C', layout, '-cf', tarball, '.']);
}

/** The images' references and tarballs, built into the machine cache when missing. */
export function ensureImages() {
  const key = sourcesKey();
  const dir = ensureCacheEntry(cacheEntry('cluster-images', key), (tmp) => {
    // Binaries, layers and layouts in a work directory; only the image tarballs stay in the entry.
    const work = path.join(tmp, 'work');
    const binaries = path.join(work, 'bin');
    execFileSync(
      'go',
      [
        'build',
        '-trimpath',
        '-ldflags=-s -w',
        '-o',
        `${binaries}/`,
        ...Object.keys(IMAGES).map((n) => `./${n}`),
      ],
      {
        cwd: SOURCES,
        stdio: 'inherit',
        env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false' },
      },
    );
    for (const name of Object.keys(IMAGES)) {
      packImage(name, path.join(binaries, name), imageRef(name, key), path.join(tmp, `${name}.tar`), work);
    }
    fs.rmSync(work, { recursive: true });
  });
  return Object.fromEntries(
    Object.keys(IMAGES).map((name) => [
      name,
      { ref: imageRef(name, key), tarball: path.join(dir, `${name}.tar`) },
    ]),
  );
}

const imageRef = (name, key) => `localhost/support-desk/cluster-${name}:${key}`;

/** Imports the tarballs into the k8s.io namespace of the containerd at `socket`. */
export function importImages(images, socket) {
  for (const { tarball } of Object.values(images)) {
    execFileSync('ctr', ['--address', socket, '--namespace', 'k8s.io', 'images', 'import', tarball], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
}
