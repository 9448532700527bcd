// The SCIM 2.0 conformance checker (PyPI `scim2-tester`) the SCIM conformance test runs: a Python
// venv in the data directory with test/tools/scim2-tester/requirements.txt installed (every package
// pinned) by pip from PyPI. A stamp (the hash of that file and of the Python that built the venv)
// rebuilds it when a pin changes; otherwise it is skipped (about 15 s on a fresh machine).
// `node scripts/infra/scim2-tester.mjs` installs it with Node alone and prints the venv's python.
// SD_PYTHON names the Python to build it with (default python3; scim2-client needs 3.11 or newer).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { config, InfraError, log, ROOT } from './common.mjs';
import { aptInstall, isRoot } from './packages.mjs';

export const SCIM_TESTER_SOURCE = path.join(ROOT, 'test', 'tools', 'scim2-tester');
const REQUIREMENTS = path.join(SCIM_TESTER_SOURCE, 'requirements.txt');
const INSTALL_TIMEOUT_MS = 300_000;

const venvDir = () => path.join(config().dataDir, 'scim2-tester');
export const scimTesterPython = () => path.join(venvDir(), 'bin', 'python');

function run(cmd, args, timeout = INSTALL_TIMEOUT_MS) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
  return {
    ok: r.status === 0,
    out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim(),
    why: r.error ? r.error.message : `exit ${r.status ?? r.signal}`,
  };
}

/** The base Python, checked to be 3.11 or newer; its version string goes into the stamp. */
function basePython() {
  const python = process.env.SD_PYTHON || 'python3';
  const r = run(python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], 30_000);
  if (!r.ok) throw new InfraError(`${python} is needed for scim2-tester and did not run (${r.why})`);
  const [major, minor] = r.out.split('.').map(Number);
  if (major < 3 || (major === 3 && minor < 11))
    throw new InfraError(`scim2-tester needs Python 3.11 or newer; ${python} is ${r.out} (set SD_PYTHON)`);
  return { python, version: r.out };
}

function stampOf(version) {
  return createHash('sha256').update(fs.readFileSync(REQUIREMENTS)).update(version).digest('hex');
}

/** Installs scim2-tester unless the venv in the data directory was built from these pins. */
export function ensureScimTester() {
  const { python, version } = basePython();
  const dir = venvDir();
  const stamp = path.join(dir, '.stamp');
  const want = stampOf(version);
  if (fs.existsSync(scimTesterPython()) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want)
    return scimTesterPython();

  log(
    `installing scim2-tester into ${path.relative(ROOT, dir) || dir} (a Python ${version} venv, from PyPI)`,
  );
  const started = Date.now();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  let venv = run(python, ['-m', 'venv', dir]);
  // Debian's python3 ships without ensurepip (the python3-venv package).
  if (!venv.ok && isRoot() && aptInstall(['python3-venv'])) {
    fs.rmSync(dir, { recursive: true, force: true });
    venv = run(python, ['-m', 'venv', dir]);
  }
  if (!venv.ok) throw new InfraError(`creating the venv failed (${venv.why}): ${venv.out}`);
  const pip = run(scimTesterPython(), [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--no-input',
    '--quiet',
    '--only-binary=:all:',
    '-r',
    REQUIREMENTS,
  ]);
  if (!pip.ok)
    throw new InfraError(
      `pip install -r ${path.relative(ROOT, REQUIREMENTS)} failed (${pip.why}): ${pip.out}`,
    );
  fs.writeFileSync(stamp, want);
  log(`  installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return scimTesterPython();
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  try {
    console.log(ensureScimTester());
  } catch (err) {
    console.error(`[infra] ${err.message}`);
    process.exit(1);
  }
}
