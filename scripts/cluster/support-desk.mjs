// Support Desk on the single-node cluster, the way deploy/README.md tells operators
// (`npm run cluster -- install`, docs/cluster.md "The five releases"):
//   1. the application and infrastructure images (npm run image, scripts/containers/infra-image.mjs)
//      imported into the cluster's containerd with `ctr -n k8s.io images import`: no registry;
//   2. the dependencies in the cluster, in the namespaces the values files name
//      (scripts/cluster/dependencies.mjs);
//   3. the namespace (restricted Pod Security Standard) and the Secrets of "Before the first
//      install", from keys generated once per cluster (kept in <cluster dir>/support-desk, 0600);
//   4. `helm upgrade --install` of the five releases with deploy/helm/values-<service>.yaml and
//      this cluster's own values (<cluster dir>/support-desk/my-values-<service>.yaml): identity
//      first (its hooks make the streams and the first admin), then the other four together.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../infra/common.mjs';
import { cacheEntry } from '../infra/machine-cache.mjs';
import { bin, crdsDir } from '../deploy/tools.mjs';
import { ensureImage } from '../image.mjs';
import { ensureInfraImage } from '../containers/infra-image.mjs';
import { SERVICES, stackSecrets } from '../containers/compose-env.mjs';
import { dependencyObjects, dependencyUrls } from './dependencies.mjs';

export const NAMESPACE = 'support-desk';
const CHART = path.join(ROOT, 'deploy', 'helm', 'support-desk-service');
const BOOTSTRAP_EMAIL = 'admin@example.com';
const WAIT = '10m';

const log = (...args) => console.error('[cluster]', ...args);

const placeOf = (c) => path.join(c.dir, 'support-desk');

function kubectl(c, args, input) {
  return execFileSync(bin('kubectl'), ['--kubeconfig', c.kubeconfig, ...args], {
    encoding: 'utf8',
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}
const apply = (c, objects) =>
  kubectl(
    c,
    ['apply', '--server-side', '--force-conflicts', '-f', '-'],
    objects.map((o) => JSON.stringify(o)).join('\n'),
  );

/** Helm with the cluster's kubeconfig and its own state directories (nothing in the caller's home). */
export function helmEnv(c) {
  const home = path.join(placeOf(c), 'helm');
  return {
    ...process.env,
    KUBECONFIG: c.kubeconfig,
    HELM_CACHE_HOME: path.join(home, 'cache'),
    HELM_CONFIG_HOME: path.join(home, 'config'),
    HELM_DATA_HOME: path.join(home, 'data'),
  };
}

/** Runs helm, resolving with its output; rejects with its stderr. */
export function helm(c, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin('helm'), args, { env: helmEnv(c), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`helm ${args.slice(0, 2).join(' ')}: ${err || out}`)),
    );
  });
}

function ctr(state, args) {
  return execFileSync('ctr', ['--address', state.containerdSocket, '--namespace', 'k8s.io', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Imports a docker-archive unless containerd has `ref` already. */
function importImage(state, ref, archive) {
  const have = ctr(state, ['images', 'ls', '-q']).split('\n');
  if (have.includes(ref)) return false;
  const started = Date.now();
  ctr(state, ['images', 'import', archive]);
  log(`imported ${ref} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return true;
}

/** Tags an image the cluster has under another tag (an upgrade to "a new version" of the same bytes). */
export function tagImage(state, ref, newRef) {
  const have = ctr(state, ['images', 'ls', '-q']).split('\n');
  if (!have.includes(newRef)) ctr(state, ['images', 'tag', ref, newRef]);
}

/** Step 1: both images into the cluster's containerd; their references. */
export function importImages(state) {
  const { tag: app, archive, bases } = ensureImage();
  const infra = ensureInfraImage(bases);
  importImage(state, app, archive);
  importImage(state, infra, path.join(cacheEntry('image-infra', infra.split(':').pop()), 'image.tar'));
  return { app, infra };
}

/** The Secrets deploy/README.md has operators create, in the releases' namespace. */
function platformSecrets(secrets) {
  const urls = dependencyUrls(secrets);
  const secret = (name, data) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NAMESPACE },
    stringData: data,
  });
  return [
    secret('support-desk-principal', { PRINCIPAL_VERIFY_KEYS: secrets.PRINCIPAL_VERIFY_KEYS }),
    secret('support-desk-service-keys', { SERVICE_VERIFY_KEYS: secrets.SERVICE_VERIFY_KEYS }),
    secret('support-desk-nats-provisioner', { NATS_URL: urls.nats('provisioner') }),
    secret('support-desk-gateway', {
      PRINCIPAL_SIGNING_KEY: secrets.PRINCIPAL_SIGNING_KEY,
      SERVICE_SIGNING_KEY: secrets.GATEWAY_SIGNING_KEY,
      NATS_URL: urls.nats('gateway'),
      REDIS_URL: urls.redis,
    }),
    secret('support-desk-identity', {
      MONGO_URL: urls.mongo,
      NATS_URL: urls.nats('identity'),
      SERVICE_SIGNING_KEY: secrets.IDENTITY_SIGNING_KEY,
      OAUTH_SIGNING_KEYS: secrets.OAUTH_SIGNING_KEYS,
    }),
    secret('support-desk-requests', {
      MONGO_URL: urls.mongo,
      NATS_URL: urls.nats('requests'),
      SERVICE_SIGNING_KEY: secrets.REQUESTS_SIGNING_KEY,
    }),
    secret('support-desk-audit', { MONGO_URL: urls.mongo, NATS_URL: urls.nats('audit') }),
    secret('support-desk-webhooks', {
      MONGO_URL: urls.mongo,
      NATS_URL: urls.nats('webhooks'),
      SERVICE_SIGNING_KEY: secrets.WEBHOOKS_SIGNING_KEY,
      WEBHOOKS_SECRET_KEY: secrets.WEBHOOKS_SECRET_KEY,
    }),
  ];
}

/**
 * This cluster's values beside the documented files (an operator's my-values-<service>.yaml):
 * the imported image, never pulled; a fixed number of pods (no metrics server feeds an HPA here:
 * two of the gateway and of requests, which the upgrade and eviction tests roll, one of the others);
 * DNS at the node's CoreDNS (a process, not a kube-dns pod); the gateway reached from the host
 * (no ingress controller); one NATS server, so streams of one replica; a longer startup probe.
 */
export function clusterValues(c, service, image) {
  const [repository, tag] = image.split(':');
  const values = {
    image: { repository, tag, pullPolicy: 'Never' },
    autoscaling: { enabled: false },
    replicas: service === 'gateway' || service === 'requests' ? 2 : 1,
    networkPolicy: { dns: { to: [{ ipBlock: { cidr: `${c.nodeIp}/32` } }] } },
    // A shared 2-core machine starting ten pods at once: a first start has taken over 60 s (the
    // chart's 30 × 2 s) while its store built indexes beside the other pods' starts.
    probes: { startup: { periodSeconds: 2, failureThreshold: 90 } },
    // What an operator with the Prometheus Operator and Grafana turns on (issue 35): the monitor,
    // the release's own alerts and the dashboard, accepted by the API server as the CRDs define
    // them (no Prometheus runs here; the real-Prometheus test scrapes and evaluates them).
    metrics: {
      serviceMonitor: { enabled: true },
      prometheusRule: { enabled: true },
      grafanaDashboard: { enabled: true },
    },
  };
  if (service === 'gateway') {
    values.ingress = { enabled: false };
    // The host's calls arrive from the node (kube-proxy masquerades them): its addresses.
    values.networkPolicy.ingressFrom = [c.hostIp, c.nodeIp, c.podGateway].map((ip) => ({
      ipBlock: { cidr: `${ip}/32` },
    }));
  }
  if (service === 'identity') values.streams = { replicas: 1 };
  if (service === 'webhooks')
    values.networkPolicy.internet = { enabled: true, clusterCidrs: [c.podCidr, c.serviceCidr] };
  return values;
}

const valuesFile = (c, s) => path.join(placeOf(c), `my-values-${s}.yaml`);

/** The command an operator runs for one release (what `install` runs), with extra `--set`s. */
export const releaseArgs = (c, s, extra = []) => [
  'upgrade',
  '--install',
  s,
  CHART,
  '--namespace',
  NAMESPACE,
  '-f',
  path.join(ROOT, 'deploy', 'helm', `values-${s}.yaml`),
  '-f',
  valuesFile(c, s),
  ...extra,
  '--wait',
  '--timeout',
  WAIT,
];

/**
 * Waits (at most 60 s) until the Prometheus Operator's CRDs serve their kinds. `kubectl wait`
 * alone fails at once on a CRD the API server has not given a status yet (seen on a fresh
 * cluster: ".status.conditions accessor error"), so it is asked again until it answers.
 */
async function crdsEstablished(c) {
  const crds = ['crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com'];
  for (const deadline = Date.now() + 60_000; ;) {
    try {
      kubectl(c, ['wait', '--for=condition=established', '--timeout=10s', ...crds]);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** The whole platform on a running cluster (`state` from `up`); what the caller needs to use it. */
export async function install(c, state) {
  const started = Date.now();
  const at = (what) => log(`${what} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const place = placeOf(c);
  fs.mkdirSync(place, { recursive: true, mode: 0o700 });
  const images = importImages(state);
  at('images in the cluster');

  const secrets = stackSecrets(place);
  // The Prometheus Operator's CRDs (ServiceMonitor, PodMonitor, PrometheusRule), as a cluster
  // with kube-prometheus-stack has them, so the releases' monitors and rules are real objects.
  kubectl(c, ['apply', '--server-side', '-f', crdsDir()]);
  await crdsEstablished(c);
  apply(c, dependencyObjects(images.infra, secrets));
  apply(c, [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: NAMESPACE,
        labels: {
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/enforce-version': 'latest',
        },
      },
    },
    ...platformSecrets(secrets),
  ]);
  for (const [ns, name] of [
    ['nats', 'nats'],
    ['redis', 'redis'],
    ['mongodb', 'mongodb'],
  ])
    kubectl(c, ['rollout', 'status', '-n', ns, `deployment/${name}`, `--timeout=${WAIT}`]);
  at('dependencies ready');

  for (const s of SERVICES)
    fs.writeFileSync(valuesFile(c, s), `${JSON.stringify(clusterValues(c, s, images.app), null, 2)}\n`);
  await helm(c, releaseArgs(c, 'identity', ['--set', `bootstrap.email=${BOOTSTRAP_EMAIL}`]));
  at('identity installed');
  await Promise.all(SERVICES.filter((s) => s !== 'identity').map((s) => helm(c, releaseArgs(c, s))));
  const installSeconds = Math.round((Date.now() - started) / 100) / 10;
  at('every release installed, every pod Ready');

  // The first admin's key: printed once, by the bootstrap Job, to its log (deploy/README.md).
  let adminKey = null;
  try {
    adminKey =
      /sd_key_[A-Za-z0-9_-]+/.exec(kubectl(c, ['logs', '-n', NAMESPACE, 'job/identity-bootstrap']))?.[0] ??
      null;
  } catch {
    // The Job is gone (its TTL) or made nothing (an admin existed): deskctl api-keys create.
  }
  const gatewayIp = kubectl(c, [
    'get',
    'service',
    '-n',
    NAMESPACE,
    'gateway',
    '-o',
    'jsonpath={.spec.clusterIP}',
  ]).trim();
  return {
    namespace: NAMESPACE,
    images,
    gateway: `http://${gatewayIp}:8080`,
    adminEmail: BOOTSTRAP_EMAIL,
    adminKey,
    installSeconds,
  };
}

/** Removes the releases, their namespace and the dependencies (the cluster stays up). */
export async function uninstall(c) {
  for (const s of [...SERVICES].reverse())
    await helm(c, ['uninstall', s, '-n', NAMESPACE, '--ignore-not-found']);
  kubectl(c, ['delete', 'namespace', NAMESPACE, 'nats', 'redis', 'mongodb', '--ignore-not-found']);
  fs.rmSync(placeOf(c), { recursive: true, force: true });
}
