// The deployment checkers, built from the Go module proxy and PyPI (this machine has no other
// source for them) into the machine cache (scripts/infra/machine-cache.mjs), so only a fresh
// machine pays the build, whatever clone asks.
// A stamp per tool records what was built; changing a pin below rebuilds that tool alone.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../infra/common.mjs';
import { cacheRoot } from '../infra/machine-cache.mjs';

export const KUBE_VERSION = '1.37.2';
/** The Kubernetes versions the manifests are validated against: the oldest supported, the newest. */
export const SCHEMA_VERSIONS = ['1.25.0', '1.37.0'];
const KUBERNETES_VALIDATE = 'kubernetes-validate==1.37.0';

/** `go install` pins. kustomize is not among them: kubectl embeds it (`kubectl kustomize`). */
const GO_TOOLS = {
  helm: 'helm.sh/helm/v3/cmd/helm@v3.22.0',
  kubeconform: 'github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0',
  'kube-score': 'github.com/zegl/kube-score/cmd/kube-score@v1.20.0',
  conftest: 'github.com/open-policy-agent/conftest@v0.71.1',
  // The chart README's parameters table (deploy:check fails when it is stale).
  'helm-docs': 'github.com/norwoodj/helm-docs/cmd/helm-docs@v1.14.2',
};

/** Built from deploy/check/kube (a wrapper module; see its go.mod) at KUBE_VERSION. */
const KUBE_TOOLS = {
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  kubectl: 'k8s.io/kubernetes/cmd/kubectl',
  etcd: './etcd',
};

/**
 * The rest of a single-node cluster (scripts/cluster.mjs), from the same module and release, and
 * CoreDNS and kube-router from their own modules (each pins its own client-go, which the wrapper
 * module cannot share). Built only when a cluster is asked for: the deploy check needs none of them.
 */
const CLUSTER_TOOLS = {
  kubelet: 'k8s.io/kubernetes/cmd/kubelet',
  'kube-scheduler': 'k8s.io/kubernetes/cmd/kube-scheduler',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
  'kube-proxy': 'k8s.io/kubernetes/cmd/kube-proxy',
};
/** CoreDNS serves the cluster's names; kube-router's firewall alone enforces NetworkPolicies. */
const CLUSTER_GO_TOOLS = {
  coredns: 'github.com/coredns/coredns@v1.15.0',
  'kube-router': 'github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@v2.1.0',
};

/**
 * The CRDs of what the chart renders beyond Kubernetes itself (the Prometheus Operator's monitors
 * and rules, Gateway API's HTTPRoute), from the Go modules that publish them: the module proxy is
 * this machine's one source. kubeconform's schemas are derived from them (checks.mjs), and the
 * dry run installs them.
 */
const CRD_MODULES = {
  'github.com/prometheus-operator/prometheus-operator@v0.85.0': {
    dir: 'example/prometheus-operator-crd',
    files: [
      'monitoring.coreos.com_servicemonitors.yaml',
      'monitoring.coreos.com_podmonitors.yaml',
      'monitoring.coreos.com_prometheusrules.yaml',
    ],
  },
  'sigs.k8s.io/gateway-api@v1.4.1': {
    dir: 'config/crd/standard',
    files: ['gateway.networking.k8s.io_httproutes.yaml'],
  },
};

export const toolsDir = () => path.join(cacheRoot(), 'deploy-tools');
export const crdsDir = () => path.join(toolsDir(), 'crds');
export const binDir = () => path.join(toolsDir(), 'bin');
export const bin = (name) => path.join(binDir(), name);
export const schemasDir = () => path.join(toolsDir(), 'schemas');

const log = (...args) => console.log('[deploy]', ...args);

function stampOk(name, want) {
  const stamp = path.join(binDir(), `.${name}.stamp`);
  return fs.existsSync(bin(name)) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want;
}

function writeStamp(name, want) {
  fs.writeFileSync(path.join(binDir(), `.${name}.stamp`), want);
}

function run(cmd, args, options = {}) {
  const started = Date.now();
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...options });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
  return Date.now() - started;
}

/**
 * Compiled without optimisations or inlining: the checkers run for seconds, and the build is what
 * a fresh machine waits for (measured on 2 cores from an empty build cache: kube-apiserver, kubectl
 * and etcd 4.6 min, then helm 55 s, conftest 80 s, kube-score 17 s, kubeconform 2 s).
 */
const GC_FLAGS = '-gcflags=all=-N -l';

const goEnv = () => ({ ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false', CGO_ENABLED: '0' });

function buildGoTools(tools) {
  for (const [name, pkg] of Object.entries(tools)) {
    if (stampOk(name, pkg)) continue;
    log(`go install ${pkg}`);
    const ms = run('go', ['install', '-trimpath', GC_FLAGS, '-ldflags=-s -w', pkg], {
      env: { ...goEnv(), GOBIN: binDir() },
      cwd: binDir(),
    });
    writeStamp(name, pkg);
    log(`  ${name} built in ${(ms / 1000).toFixed(0)} s`);
  }
}

function buildKubeTools(tools, estimate) {
  const want = `k8s.io/kubernetes@v${KUBE_VERSION}`;
  if (Object.keys(tools).every((name) => stampOk(name, want))) return;
  const [major, minor] = KUBE_VERSION.split('.');
  const v = 'k8s.io/component-base/version';
  const ldflags = [
    '-s -w',
    `-X ${v}.gitVersion=v${KUBE_VERSION}`,
    `-X ${v}.gitMajor=${major}`,
    `-X ${v}.gitMinor=${minor}`,
    `-X ${v}.gitTreeState=clean`,
  ].join(' ');
  log(`building ${Object.keys(tools).join(', ')} (${want}); a fresh machine takes about ${estimate}`);
  const ms = run(
    'go',
    ['build', '-trimpath', GC_FLAGS, `-ldflags=${ldflags}`, '-o', `${binDir()}/`, ...Object.values(tools)],
    {
      env: goEnv(),
      cwd: path.join(ROOT, 'deploy', 'check', 'kube'),
    },
  );
  for (const name of Object.keys(tools)) writeStamp(name, want);
  log(`  built in ${(ms / 1000).toFixed(0)} s`);
}

/**
 * The Kubernetes JSON schemas kubeconform validates against, from the kubernetes-validate wheel.
 * The wheel's schemas refer to `/api/_definitions.json` under a `https://kubernetes.io` $id, which
 * kubeconform would fetch over the network; the conversion points every reference and $id at the
 * local files instead.
 */
function extractSchemas() {
  const want = `${KUBERNETES_VALIDATE} ${SCHEMA_VERSIONS.join(' ')}`;
  const stamp = path.join(schemasDir(), '.stamp');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) return;
  fs.rmSync(schemasDir(), { recursive: true, force: true });
  fs.mkdirSync(schemasDir(), { recursive: true });
  const wheels = path.join(toolsDir(), 'wheels');
  log(`pip download ${KUBERNETES_VALIDATE}`);
  run('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--dest', wheels, KUBERNETES_VALIDATE]);
  const wheel = fs
    .readdirSync(wheels)
    .find((f) => f.startsWith('kubernetes_validate-') && f.endsWith('.whl'));
  if (!wheel) throw new Error(`no kubernetes_validate wheel in ${wheels}`);
  const script = `
import json, os, sys, zipfile
wheel, out, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
z = zipfile.ZipFile(wheel)
for v in versions:
    prefix = f"kubernetes_validate/kubernetes-json-schema/v{v}-local-strict/"
    target = os.path.join(out, f"v{v}-standalone-strict")
    os.makedirs(target)
    for name in z.namelist():
        if not name.startswith(prefix) or not name.endswith(".json"):
            continue
        base = name[len(prefix):]
        text = z.read(name).decode().replace('"/api/_definitions.json#', f'"file://{target}/_definitions.json#')
        doc = json.loads(text)
        doc["$id"] = f"file://{target}/{base}"
        with open(os.path.join(target, base), "w") as f:
            json.dump(doc, f)
`;
  run('python3', ['-c', script, path.join(wheels, wheel), schemasDir(), ...SCHEMA_VERSIONS]);
  fs.writeFileSync(stamp, want);
}

/** Copies each CRD out of its module (`go mod download`), named `<plural>.<group>.yaml` as kubectl names it. */
function fetchCrds() {
  const want = JSON.stringify(CRD_MODULES);
  const stamp = path.join(crdsDir(), '.stamp');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) return;
  fs.rmSync(crdsDir(), { recursive: true, force: true });
  fs.mkdirSync(crdsDir(), { recursive: true });
  for (const [module, { dir, files }] of Object.entries(CRD_MODULES)) {
    log(`go mod download ${module}`);
    const r = spawnSync('go', ['mod', 'download', '-json', module], {
      encoding: 'utf8',
      env: goEnv(),
      cwd: crdsDir(),
    });
    const info = r.status === 0 ? JSON.parse(r.stdout) : null;
    if (!info?.Dir) throw new Error(`go mod download ${module} failed: ${r.stdout}${r.stderr}`);
    for (const file of files) {
      const text = fs.readFileSync(path.join(info.Dir, dir, file), 'utf8');
      const name = text.match(/^metadata:\n(?:\s+.*\n)*?\s+name: (\S+)$/m)?.[1];
      if (!name) throw new Error(`${module}/${dir}/${file}: no metadata.name`);
      fs.writeFileSync(path.join(crdsDir(), `${name}.yaml`), text);
    }
  }
  fs.writeFileSync(stamp, want);
}

/** Builds whatever is missing or out of date; returns at once when everything is cached. */
export function ensureTools() {
  fs.mkdirSync(binDir(), { recursive: true });
  // The Kubernetes build first: helm and kube-score then reuse much of its build cache.
  buildKubeTools(KUBE_TOOLS, '7 minutes');
  buildGoTools(GO_TOOLS);
  extractSchemas();
  fetchCrds();
}

/** The deploy check's tools and the cluster's (scripts/cluster.mjs). */
export function ensureClusterTools() {
  ensureTools();
  buildKubeTools(CLUSTER_TOOLS, '6 minutes');
  buildGoTools(CLUSTER_GO_TOOLS);
}

// `node scripts/deploy/tools.mjs [--cluster]` builds them with nothing but Node itself (no
// node_modules yet): CI starts it before `npm ci`.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  try {
    if (process.argv.includes('--cluster')) ensureClusterTools();
    else ensureTools();
  } catch (err) {
    console.error(`[deploy] ${err.message}`);
    process.exit(1);
  }
}
