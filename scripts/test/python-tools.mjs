// The Python tools the e2e tests run, each from PyPI into its own venv in the machine cache:
// test/tools/<name>/requirements.txt installed by pip (every package pinned, wheels only). A stamp
// (the hash of that file and of the Python that built the venv) rebuilds a venv when a pin changes;
// otherwise it is skipped (each takes 10-20 s to install on a fresh machine).
//   scim2-tester  the SCIM 2.0 conformance checker (test/e2e/test/scim-conformance.test.ts)
//   schemathesis  the OpenAPI property-based tester (test/e2e/test/schemathesis.test.ts)
// `node scripts/test/python-tools.mjs <name>` installs one with Node alone and prints its venv's
// python (the tool's commands are beside it). SD_PYTHON names the Python to build them with
// (default python3; both need 3.11 or newer: scim2-client does).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InfraError, log, ROOT } from '../infra/common.mjs';
import { cacheRoot } from '../infra/machine-cache.mjs';
import { aptInstall, isRoot } from '../infra/packages.mjs';

/** Each tool, by the test file that runs it (npm test installs the tools of the files it runs). */
export const PYTHON_TOOLS = {
  'scim2-tester': { testFile: 'scim-conformance.test.js' },
  schemathesis: { testFile: 'schemathesis.test.js' },
};
const INSTALL_TIMEOUT_MS = 300_000;

const requirementsOf = (name) => path.join(ROOT, 'test', 'tools', name, 'requirements.txt');
const venvDir = (name) => path.join(cacheRoot(), 'python', name);
/** The venv's python; the tool's own commands (e.g. `st`) are in the same directory. */
export const toolPython = (name) => path.join(venvDir(name), 'bin', 'python');

function run(cmd, args, timeout = INSTALL_TIMEOUT_MS) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
  return {
    ok: r.status === 0,
    out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim(),
    why: r.error ? r.error.message : `exit ${r.status ?? r.signal}`,
  };
}

/** The base Python, checked to be 3.11 or newer; its version string goes into the stamp. */
function basePython(name) {
  const python = process.env.SD_PYTHON || 'python3';
  const r = run(python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], 30_000);
  if (!r.ok) throw new InfraError(`${python} is needed for ${name} and did not run (${r.why})`);
  const [major, minor] = r.out.split('.').map(Number);
  if (major < 3 || (major === 3 && minor < 11))
    throw new InfraError(`${name} needs Python 3.11 or newer; ${python} is ${r.out} (set SD_PYTHON)`);
  return { python, version: r.out };
}

function stampOf(name, version) {
  return createHash('sha256')
    .update(fs.readFileSync(requirementsOf(name)))
    .update(version)
    .digest('hex');
}

/** Installs the tool unless its venv in the machine cache was built from these pins; its python. */
export function ensurePythonTool(name) {
  if (!Object.hasOwn(PYTHON_TOOLS, name))
    throw new InfraError(`unknown Python tool ${name} (known: ${Object.keys(PYTHON_TOOLS).join(', ')})`);
  const { python, version } = basePython(name);
  const dir = venvDir(name);
  const stamp = path.join(dir, '.stamp');
  const want = stampOf(name, version);
  if (fs.existsSync(toolPython(name)) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want)
    return toolPython(name);

  log(`installing ${name} into ${path.relative(ROOT, dir) || dir} (a Python ${version} venv, from PyPI)`);
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
  const pip = run(toolPython(name), [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--no-input',
    '--quiet',
    '--only-binary=:all:',
    '-r',
    requirementsOf(name),
  ]);
  if (!pip.ok)
    throw new InfraError(
      `pip install -r ${path.relative(ROOT, requirementsOf(name))} failed (${pip.why}): ${pip.out}`,
    );
  fs.writeFileSync(stamp, want);
  log(`  installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return toolPython(name);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  try {
    console.log(ensurePythonTool(process.argv[2]));
  } catch (err) {
    console.error(`[infra] ${err.message}`);
    process.exit(1);
  }
}
