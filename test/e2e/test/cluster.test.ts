// test-runner: timeout=1200
// The single-node cluster (scripts/cluster.mjs) runs real workloads: a Deployment of the cluster's
// test image under a namespace that enforces the restricted Pod Security Standard becomes Ready,
// answers through its Service's ClusterIP (kube-proxy) from the host and by DNS name (CoreDNS)
// from another pod, gets a deleted pod replaced, is closed by a NetworkPolicy (kube-router) to all
// but the pods it allows, and the namespace refuses a privileged pod.
// Then Support Desk on it as operators install it (`npm run cluster -- install`): five helm
// releases, `helm test`, the walkthrough, a rolling upgrade and a rollback under write load, and a
// deleted and an evicted pod under load (test/e2e/src/cluster-platform.ts).
// Reuses a cluster that is already up (a CI step's, or `npm run cluster -- up`), else starts one
// and stops it at the end. Needs root (namespaces, containerd, the kubelet): skipped otherwise.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { platformTests } from '../src/cluster-platform.js';

const ROOT = path.resolve(fileURLToPath(import.meta.url), '../../../../..');

const CLUSTER = path.join(ROOT, 'scripts', 'cluster.mjs');
const STEP_TIMEOUT_MS = 180_000;

interface ClusterState {
  kubeconfig: string;
  kubectl: string;
  containerdSocket: string;
  images: { echo: string };
}

const cluster = (args: string[]) =>
  execFileSync(process.execPath, [CLUSTER, ...args], {
    encoding: 'utf8',
    timeout: 900_000,
    stdio: ['ignore', 'pipe', 'inherit'],
  });

function clusterIsUp() {
  try {
    cluster(['status']);
    return true;
  } catch {
    return false;
  }
}

if (process.getuid?.() !== 0) {
  t.plan(0, 'the cluster needs root (network and mount namespaces, containerd, the kubelet); not root here');
} else {
  const reused = clusterIsUp();
  const state = JSON.parse(cluster(['up', '--json']).trim().split('\n').pop() as string) as ClusterState;
  if (!reused) t.teardown(() => void cluster(['down']));

  const kubectl = (args: string[], input?: string) =>
    execFileSync(state.kubectl, ['--kubeconfig', state.kubeconfig, ...args], {
      encoding: 'utf8',
      input,
      timeout: STEP_TIMEOUT_MS,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  /** kubectl's failure as `{ stderr }`, or null when it succeeded. */
  const kubectlFails = (args: string[], input?: string) => {
    try {
      kubectl(args, input);
      return null;
    } catch (err) {
      return { stderr: String((err as { stderr?: string }).stderr) };
    }
  };

  const ns = `cluster-test-${crypto.randomBytes(3).toString('hex')}`;
  kubectl(['create', 'namespace', ns]);
  t.teardown(() => void kubectlFails(['delete', 'namespace', ns, '--wait=false']));
  kubectl([
    'label',
    'namespace',
    ns,
    'pod-security.kubernetes.io/enforce=restricted',
    'pod-security.kubernetes.io/enforce-version=latest',
  ]);

  const restricted = {
    podSecurityContext: {
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    container: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
  };
  const echoContainer = {
    name: 'echo',
    image: state.images.echo,
    imagePullPolicy: 'Never',
    ports: [{ containerPort: 8080, name: 'http' }],
    readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 1 },
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
    securityContext: restricted.container,
  };
  const apply = (doc: object) => kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(doc));

  const readyPods = () => {
    const pods = JSON.parse(kubectl(['get', 'pods', '-n', ns, '-l', 'app=echo', '-o', 'json'])) as {
      items: {
        metadata: { name: string; deletionTimestamp?: string };
        status: { conditions?: { type: string; status: string }[] };
      }[];
    };
    return pods.items
      .filter(
        (p) =>
          !p.metadata.deletionTimestamp &&
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      )
      .map((p) => p.metadata.name)
      .sort();
  };
  /** One GET on a connection of its own, so that kube-proxy picks a backend for each call. */
  const getJson = (url: string) =>
    new Promise<unknown>((resolve, reject) => {
      const req = http.get(url, { agent: false, timeout: 3000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${res.statusCode} ${body}`)),
        );
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
    });
  const until = async <T>(
    what: string,
    probe: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs = STEP_TIMEOUT_MS,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (let i = 0; Date.now() < deadline && i < 10_000; i++) {
      try {
        const v = await probe();
        if (v) return v;
        last = undefined;
      } catch (err) {
        last = err;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`${what}: not within ${timeoutMs / 1000} s${last ? ` (${String(last)})` : ''}`);
  };

  t.test('a restricted Deployment becomes Ready and is reached through its Service', async (t) => {
    apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'echo' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'echo' } },
        template: {
          metadata: { labels: { app: 'echo' } },
          spec: { securityContext: restricted.podSecurityContext, containers: [echoContainer] },
        },
      },
    });
    apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'echo' },
      spec: { selector: { app: 'echo' }, ports: [{ port: 80, targetPort: 'http' }] },
    });
    kubectl(['rollout', 'status', '-n', ns, 'deployment/echo', `--timeout=${STEP_TIMEOUT_MS / 1000}s`]);
    const pods = readyPods();
    t.equal(pods.length, 2, `two Ready pods: ${pods.join(', ')}`);

    const clusterIp = kubectl([
      'get',
      'service',
      '-n',
      ns,
      'echo',
      '-o',
      'jsonpath={.spec.clusterIP}',
    ]).trim();
    // kube-proxy writes the Service's rules on its next sync: the first calls may be refused.
    const seen = new Set<string>();
    await until('both pods answering through the ClusterIP', async () => {
      seen.add(((await getJson(`http://${clusterIp}/`)) as { pod: string }).pod);
      return seen.size === 2;
    });
    t.same([...seen].sort(), pods, `the Service at ${clusterIp} reaches both pods`);
  });

  /** Runs the image's client (`echo get URL`) in a pod of its own: its phase and output. */
  const getFromPod = async (name: string, url: string, { labels = {}, tries = 1 } = {}) => {
    apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels },
      spec: {
        restartPolicy: 'Never',
        securityContext: restricted.podSecurityContext,
        containers: [
          {
            ...echoContainer,
            name: 'get',
            args: ['get', url],
            env: [{ name: 'TRIES', value: String(tries) }],
            readinessProbe: undefined,
            ports: undefined,
          },
        ],
      },
    });
    const phase = await until(`${name} finished`, () => {
      const p = kubectl(['get', 'pod', '-n', ns, name, '-o', 'jsonpath={.status.phase}']).trim();
      return p === 'Succeeded' || p === 'Failed' ? p : undefined;
    });
    return { phase, logs: kubectl(['logs', '-n', ns, name]).trim() };
  };

  t.test('another pod reaches the Service by its DNS names', async (t) => {
    for (const [name, url] of [
      ['get-short', 'http://echo/'],
      ['get-fqdn', `http://echo.${ns}.svc.cluster.local/`],
    ]) {
      const { phase, logs } = await getFromPod(name, url);
      t.equal(phase, 'Succeeded', `${url} answered from inside the cluster: ${logs}`);
      t.match(logs, /"pod":"echo-/, 'the answer names an echo pod');
    }
  });

  t.test('a deleted pod is replaced', async (t) => {
    const before = readyPods();
    kubectl(['delete', 'pod', '-n', ns, before[0], '--wait=false']);
    const after = await until('a replacement Ready', () => {
      const now = readyPods();
      return now.length === 2 && !now.includes(before[0]) ? now : undefined;
    });
    t.ok(after.includes(before[1]), 'the other pod was left alone');
    t.notOk(after.includes(before[0]), `${before[0]} replaced by ${after.find((p) => p !== before[1])}`);
  });

  t.test('a NetworkPolicy is enforced (kube-router): what it does not allow is denied', async (t) => {
    apply({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'echo-from-clients' },
      spec: {
        podSelector: { matchLabels: { app: 'echo' } },
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ port: 8080 }] }],
      },
    });
    // kube-router applies a new policy on its next sync: the first call may still get through.
    let denied: { phase: string; logs: string } | undefined;
    for (let i = 1; i <= 5 && !denied; i++) {
      const outcome = await getFromPod(`unlabelled-${i}`, 'http://echo/');
      if (outcome.phase === 'Failed') denied = outcome;
    }
    t.ok(denied, `a pod without role=client is denied: ${denied?.logs}`);
    // kube-router lets a new pod's address in once it has seen the pod: the client retries.
    const allowed = await getFromPod('client', 'http://echo/', { labels: { role: 'client' }, tries: 30 });
    t.equal(allowed.phase, 'Succeeded', `a pod with role=client is let through: ${allowed.logs}`);
  });

  t.test("the namespace's admission refuses a privileged pod", async (t) => {
    const failure = kubectlFails(
      ['create', '-n', ns, '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'privileged' },
        spec: {
          containers: [
            {
              name: 'c',
              image: state.images.echo,
              imagePullPolicy: 'Never',
              securityContext: { privileged: true },
            },
          ],
        },
      }),
    );
    t.ok(failure, 'the privileged pod was refused');
    t.match(failure?.stderr, /violates PodSecurity "restricted:latest"/, failure?.stderr ?? '');
    t.match(failure?.stderr, /privileged/, 'the refusal names the privileged container');
    t.ok(kubectlFails(['get', 'pod', '-n', ns, 'privileged']), 'and no such pod exists');
  });

  platformTests(t, { state, cluster, kubectl, until });
}
