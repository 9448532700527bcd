// Support Desk on the single-node cluster (test/e2e/test/cluster.test.ts): installed as
// deploy/README.md tells operators (`npm run cluster -- install`: the images imported into
// containerd, the dependencies in their namespaces, the Secrets, five `helm install`s into a
// namespace enforcing the restricted Pod Security Standard), then `helm test`, the walkthrough's
// first calls through the gateway Service, `helm upgrade` of requests to a new image tag and
// `helm rollback` under steady write load, and a deleted and two evicted pods under load: no failed
// call, every acknowledged write's event in audit exactly once, the other releases' pods untouched.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { request, type Json } from './http.js';
import { ROOT } from './stack.js';
import { auditCounts, startWriteLoad } from './write-load.js';

const NS = 'support-desk';
const SERVICES = ['identity', 'requests', 'audit', 'webhooks', 'gateway'] as const;
const CHART = path.join(ROOT, 'deploy', 'helm', 'support-desk-service');
const STEP_TIMEOUT_MS = 600_000;
/** Writes before and after each disturbance, so that the load spans all of it. */
const SETTLE_MS = 2_000;

interface Tools {
  state: { kubeconfig: string; kubectl: string; containerdSocket: string };
  cluster: (args: string[]) => string;
  kubectl: (args: string[], input?: string) => string;
  until: <T>(
    what: string,
    probe: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs?: number,
  ) => Promise<T>;
}

interface Platform {
  namespace: string;
  gateway: string;
  images: { app: string };
  adminEmail: string;
  adminKey: string | null;
  installSeconds: number;
}

interface PodList {
  items: {
    metadata: { name: string; uid: string; deletionTimestamp?: string; ownerReferences?: { kind: string }[] };
    spec: { containers: { image: string }[] };
    status: { conditions?: { type: string; status: string }[] };
  }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function platformTests(t: Test, { state, cluster, kubectl, until }: Tools) {
  const helmHome = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-cluster-helm-'));
  t.teardown(() => fs.rmSync(helmHome, { recursive: true, force: true }));
  /** helm with the cluster's kubeconfig and state of the test's own; resolves with its output. */
  const helm = async (args: string[]) =>
    (
      await promisify(execFile)(
        path.join(path.dirname(state.kubectl), 'helm'),
        [...args, '--kubeconfig', state.kubeconfig],
        {
          encoding: 'utf8',
          timeout: STEP_TIMEOUT_MS,
          env: {
            ...process.env,
            HELM_CACHE_HOME: path.join(helmHome, 'cache'),
            HELM_CONFIG_HOME: path.join(helmHome, 'config'),
            HELM_DATA_HOME: path.join(helmHome, 'data'),
          },
        },
      )
    ).stdout;
  const deskctl = (args: string[]) =>
    kubectl(['exec', '-n', NS, 'deploy/identity', '--', 'deskctl', ...args]);
  const pods = (release: string) =>
    (
      JSON.parse(
        kubectl(['get', 'pods', '-n', NS, '-l', `app.kubernetes.io/instance=${release}`, '-o', 'json']),
      ) as PodList
    ).items.filter(
      // The Deployment's pods (not its hooks' Jobs or `helm test`'s pod), but those going away.
      (p) =>
        !p.metadata.deletionTimestamp && p.metadata.ownerReferences?.some((o) => o.kind === 'ReplicaSet'),
    );
  const readyPods = (release: string) =>
    pods(release).filter((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  /** uid of every pod of the releases other than `release`. */
  const othersUids = (release: string) =>
    SERVICES.filter((s) => s !== release)
      .flatMap((s) => pods(s).map((p) => p.metadata.uid))
      .sort();

  let platform: Platform;
  let adminKey = '';
  let agentKey = '';

  t.test('the five releases install with helm into a restricted namespace, every pod Ready', async (t) => {
    platform = JSON.parse(cluster(['install', '--json']).trim().split('\n').pop() as string) as Platform;
    t.comment(`install (images, dependencies, five releases) took ${platform.installSeconds} s`);
    const labels = JSON.parse(kubectl(['get', 'namespace', NS, '-o', 'jsonpath={.metadata.labels}'])) as Json;
    t.equal(labels['pod-security.kubernetes.io/enforce'], 'restricted', 'the namespace enforces restricted');
    const releases = JSON.parse(await helm(['list', '-n', NS, '-o', 'json'])) as {
      name: string;
      status: string;
    }[];
    t.same(
      releases.map((r) => `${r.name} ${r.status}`).sort(),
      SERVICES.map((s) => `${s} deployed`).sort(),
      'five releases deployed',
    );
    for (const s of SERVICES) {
      const all = pods(s);
      t.ok(
        all.length > 0 && readyPods(s).length === all.length,
        `${s}: ${all.length} pod(s), every one Ready`,
      );
      t.ok(
        all.every((p) => p.spec.containers[0].image === platform.images.app),
        `${s} runs the imported image ${platform.images.app}`,
      );
    }
    // With metrics.* on (as an operator with the Prometheus Operator sets them): every release's
    // ServiceMonitor, its own PrometheusRule and the dashboard ConfigMap, accepted by the API server.
    const owned = (kind: string, selector = '') =>
      (
        JSON.parse(kubectl(['get', kind, '-n', NS, '-o', 'json', ...(selector ? ['-l', selector] : [])])) as {
          items: { metadata: { labels?: Record<string, string> } }[];
        }
      ).items.map((o) => o.metadata.labels?.['app.kubernetes.io/instance']);
    const monitors = owned('servicemonitors.monitoring.coreos.com');
    const rules = owned('prometheusrules.monitoring.coreos.com');
    const dashboards = owned('configmaps', 'grafana_dashboard=1');
    for (const s of SERVICES) {
      t.ok(monitors.includes(s), `${s}: a ServiceMonitor`);
      t.ok(rules.includes(s), `${s}: its PrometheusRule`);
      t.ok(dashboards.includes(s), `${s}: the dashboard ConfigMap`);
    }
  });

  t.test('helm test passes for each release', async (t) => {
    const outs = await Promise.all(SERVICES.map((s) => helm(['test', s, '-n', NS, '--logs'])));
    for (const [i, s] of SERVICES.entries()) {
      const out = outs[i];
      t.match(out, /Phase:\s+Succeeded/, `helm test ${s}`);
      t.match(out, /\/readyz: 200/, `${s}: /readyz of the release answered 200`);
      if (s === 'gateway') t.match(out, /\/v1\/me without credentials: 401 UNAUTHORIZED/, 'the 401 envelope');
    }
  });

  t.test("the walkthrough's first calls through the gateway Service, and the event in audit", async (t) => {
    const base = `${platform.gateway}/v1`;
    /** `deskctl api-keys create` in an identity pod (kubectl exec): the key it prints once. */
    const createKey = (owner: string, name: string, scopes: string, extra: string[] = []) =>
      String(
        (
          JSON.parse(
            deskctl([
              'api-keys',
              'create',
              '--owner',
              owner,
              '--name',
              name,
              '--scopes',
              scopes,
              ...extra,
              '--json',
            ]),
          ) as Json
        ).key,
      );
    // The bootstrap Job's key (a fresh install), else one made with deskctl as deploy/README.md says.
    const bootstrapKey = platform.adminKey ?? createKey(platform.adminEmail, 'test admin', 'admin');
    const me = await request(`${base}/me`, { headers: { Authorization: `Bearer ${bootstrapKey}` } });
    t.equal(me.json?.data?.role, 'admin', 'GET /v1/me with the first admin key');
    // Keys without the standard plan's per-minute caps, for the load below.
    const unlimited = ['--plan', 'enterprise', '--rate-limit', '100000', '--events-rate-limit', '100000'];
    adminKey = createKey(platform.adminEmail, 'audit reader', 'admin', unlimited);
    const email = `ada.${process.pid}.${Date.now()}@example.com`;
    deskctl(['users', 'create', '--email', email, '--name', 'Ada', '--role', 'agent']);
    agentKey = createKey(email, 'laptop', 'requests:read,requests:write', unlimited);
    t.match(agentKey, /^sd_key_/, 'deskctl api-keys create (kubectl exec) printed a key');
    const agent = { Authorization: `Bearer ${agentKey}` };
    const title = `VPN drops every hour ${process.pid}`;
    const made = await request(`${base}/requests`, {
      method: 'POST',
      headers: agent,
      json: { title, description: 'Since Monday the VPN disconnects hourly.', priority: 'high' },
    });
    t.equal(made.status, 201, 'POST /v1/requests');
    const id = String(made.json?.data?.id);
    t.equal(
      (await request(`${base}/requests/${id}`, { headers: agent })).json?.data?.title,
      title,
      'read back',
    );
    const types = await until('request.created in audit', async () => {
      const events = await request(`${base}/events?resourceId=${id}`, {
        headers: { Authorization: `Bearer ${adminKey}` },
      });
      const seen = ((events.json?.data?.events ?? []) as Json[]).map((e) => String(e.type));
      return seen.includes('request.created') && seen;
    });
    t.ok(types.includes('request.created'), `audit has request.created for ${id}`);
  });

  /** Runs `disturb` under write load; checks no call failed and audit has each write once. */
  const underLoad = async (t: Test, label: string, disturb: () => Promise<void>) => {
    const since = new Date(Date.now() - 1000).toISOString();
    const load = startWriteLoad(platform.gateway, agentKey, { label: `${label} ${process.pid}` });
    await sleep(SETTLE_MS);
    const started = Date.now();
    await disturb();
    const seconds = (Date.now() - started) / 1000;
    await sleep(SETTLE_MS);
    const result = await load.stop();
    t.comment(
      `${label}: ${seconds.toFixed(1)} s; ${result.calls} calls in ${result.seconds.toFixed(1)} s under load`,
    );
    t.same(result.failures, [], `${label}: no failed call (${result.calls} calls)`);
    t.ok(result.acknowledged.length > 0, `${label}: writes acknowledged during it`);
    const audit = await auditCounts(platform.gateway, adminKey, result.acknowledged, since);
    t.same(audit.missing, [], `${label}: no acknowledged write's event lost`);
    t.same(audit.duplicated, [], `${label}: no event duplicated`);
  };

  t.test('helm upgrade of requests to a new image tag, then helm rollback, under write load', async (t) => {
    const [repo, original] = platform.images.app.split(':');
    const next = `${original}-next`;
    execFileSync('ctr', [
      '--address',
      state.containerdSocket,
      '-n',
      'k8s.io',
      'images',
      'tag',
      '--force',
      platform.images.app,
      `${repo}:${next}`,
    ]);
    const others = othersUids('requests');
    for (const [label, args, expected] of [
      [
        'helm upgrade',
        ['upgrade', 'requests', CHART, '-n', NS, '--reuse-values', '--set', `image.tag=${next}`],
        next,
      ],
      ['helm rollback', ['rollback', 'requests', '-n', NS], original],
    ] as const) {
      const before = pods('requests').map((p) => p.metadata.name);
      await underLoad(t, label, async () => {
        await helm([...args, '--wait', '--timeout', '10m']);
      });
      const after = readyPods('requests');
      t.ok(
        after.length >= 2 && after.every((p) => !before.includes(p.metadata.name)),
        `${label}: every requests pod new`,
      );
      t.ok(
        after.every((p) => p.spec.containers[0].image === `${repo}:${expected}`),
        `${label}: requests runs ${expected}`,
      );
      t.same(othersUids('requests'), others, `${label}: the other releases' pods untouched`);
    }
  });

  t.test('a deleted pod and evictions of requests (its PodDisruptionBudget) under write load', async (t) => {
    const evict = (name: string) =>
      kubectl(
        ['create', '--raw', `/api/v1/namespaces/${NS}/pods/${name}/eviction`, '-f', '-'],
        JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } }),
      );
    const replaced = (gone: string) =>
      until(`${gone} replaced by a Ready pod`, () => {
        const ready = readyPods('requests');
        return ready.length >= 2 && !ready.some((p) => p.metadata.name === gone) && ready;
      });
    await underLoad(t, 'a deleted pod, then evictions', async () => {
      const [victim] = readyPods('requests');
      kubectl(['delete', 'pod', '-n', NS, victim.metadata.name, '--wait=false']);
      await replaced(victim.metadata.name);
      const [first, second] = readyPods('requests').map((p) => p.metadata.name);
      await until(
        'the PDB allows one disruption',
        () =>
          kubectl([
            'get',
            'pdb',
            '-n',
            NS,
            'requests',
            '-o',
            'jsonpath={.status.disruptionsAllowed}',
          ]).trim() === '1',
      );
      evict(first);
      let refusal = '';
      try {
        evict(second);
      } catch (err) {
        refusal = String((err as { stderr?: string }).stderr);
      }
      t.match(refusal, /disruption budget/, 'a second eviction while one pod is down is refused by the PDB');
      await replaced(first);
      evict(second);
      await replaced(second);
    });
  });
}
