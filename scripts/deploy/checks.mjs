// The checkers, each a function from files to {ok, output}, so the same call validates the real
// manifests and proves, on the broken fixtures, that it can fail.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { DEPLOY, helm, NAMESPACE } from './render.mjs';
import { bin, crdsDir, schemasDir } from './tools.mjs';

export const POLICY_DIR = path.join(DEPLOY, 'check', 'policy');
export const CRD_DIR = path.join(DEPLOY, 'check', 'crds');

/** Every CRD the checks install: ours (KEDA's, kept in the repository) and the fetched ones (tools.mjs). */
const crdFiles = () =>
  [CRD_DIR, crdsDir()].flatMap((dir) =>
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => path.join(dir, f)),
  );

function result(r) {
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

function exec(name, args, options = {}) {
  return result(spawnSync(bin(name), args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options }));
}

export function helmLint(chart, kubeVersion, valueArgs) {
  return result(helm(['lint', '--strict', '--kube-version', kubeVersion, chart, ...valueArgs]));
}

export function helmTemplate(chart, kubeVersion, valueArgs) {
  return result(helm(['template', 'check', chart, '--kube-version', kubeVersion, ...valueArgs]));
}

/**
 * kubeconform's schema for each CRD the chart renders, derived from the CRD file the dry run
 * installs: strict (no field the CRD does not declare), like the Kubernetes schemas.
 */
export function writeCrdSchemas(outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  const strict = (schema) => {
    if (schema && typeof schema === 'object') {
      if (schema.type === 'object' && schema.properties && !schema['x-kubernetes-preserve-unknown-fields'])
        schema.additionalProperties ??= false;
      for (const v of Object.values(schema)) strict(v);
    }
    return schema;
  };
  for (const file of crdFiles()) {
    const crd = YAML.parse(fs.readFileSync(file, 'utf8'));
    const group = crd.spec.group.split('.')[0];
    for (const version of crd.spec.versions) {
      const schema = strict(structuredClone(version.schema.openAPIV3Schema));
      const name = `${crd.spec.names.kind.toLowerCase()}-${group}-${version.name}.json`;
      fs.writeFileSync(path.join(outDir, name), JSON.stringify(schema));
    }
  }
}

export function kubeconform(files, kubeVersion, crdSchemaDir) {
  return exec('kubeconform', [
    '-strict',
    '-summary',
    '-kubernetes-version',
    kubeVersion,
    '-schema-location',
    `${schemasDir()}/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
    '-schema-location',
    `${crdSchemaDir}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
    ...files,
  ]);
}

/**
 * kube-score, failing on warnings too. Two tests are off, each for a reason:
 * - it asks for a host podAntiAffinity, and the chart spreads replicas over nodes and zones with
 *   topologySpreadConstraints instead (the newer mechanism, which also covers zones);
 * - it asks for `imagePullPolicy: Always`, and the chart pulls `IfNotPresent`: released tags are
 *   never re-pushed and production pins a digest, so Always would only make every pod start
 *   (a reschedule, a scale-up) depend on the registry being up.
 */
export function kubeScore(files) {
  return exec('kube-score', [
    'score',
    '--output-format',
    'ci',
    '--exit-one-on-warning',
    '--ignore-test',
    'deployment-has-host-podantiaffinity',
    '--ignore-test',
    'container-image-pull-policy',
    ...files,
  ]);
}

/** Our rules, over all documents of one release at once (cross-object rules need them all). */
export function conftest(file) {
  return exec('conftest', ['test', '--combine', '--no-color', '--policy', POLICY_DIR, file]);
}

export function kubectl(kubeconfig, args) {
  return exec('kubectl', ['--kubeconfig', kubeconfig, ...args]);
}

/** Every object through admission (Pod Security "restricted" included), warnings as errors. */
export function serverDryRun(kubeconfig, file) {
  return kubectl(kubeconfig, [
    '--namespace',
    NAMESPACE,
    '--warnings-as-errors',
    'apply',
    '--dry-run=server',
    '--validate=strict',
    '-f',
    file,
  ]);
}

export function helmServerDryRun(kubeconfig, installArgs) {
  return result(helm(['install', ...installArgs, '--kubeconfig', kubeconfig, '--dry-run=server']));
}

/** A namespace that enforces the restricted Pod Security Standard, and the CRDs the chart uses. */
export function prepareCluster(kubeconfig) {
  const steps = [
    kubectl(kubeconfig, ['create', 'namespace', NAMESPACE]),
    // What a cluster's controller-manager creates in every namespace (this one runs none): the
    // chart test's pod runs as it.
    kubectl(kubeconfig, ['--namespace', NAMESPACE, 'create', 'serviceaccount', 'default']),
    kubectl(kubeconfig, [
      'label',
      'namespace',
      NAMESPACE,
      'pod-security.kubernetes.io/enforce=restricted',
      'pod-security.kubernetes.io/warn=restricted',
      'pod-security.kubernetes.io/audit=restricted',
    ]),
    // Server-side: the larger CRDs would not fit client-side apply's last-applied annotation.
    ...[CRD_DIR, crdsDir()].map((dir) => kubectl(kubeconfig, ['apply', '--server-side', '-f', dir])),
    kubectl(kubeconfig, [
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      ...crdFiles().map((f) => `crd/${path.basename(f, '.yaml')}`),
    ]),
  ];
  const failed = steps.find((s) => !s.ok);
  if (failed) throw new Error(`preparing the API server failed: ${failed.output}`);
}

/** The Dockerfile and the chart agree on the user and on tini as PID 1. */
export function dockerfileAgrees(values) {
  const dockerfile = fs.readFileSync(path.join(DEPLOY, '..', 'Dockerfile'), 'utf8');
  const problems = [];
  const user = dockerfile.match(/^USER\s+(\S+)\s*$/m)?.[1];
  const want = `${values.securityContext.runAsUser}:${values.securityContext.runAsGroup}`;
  if (user !== want) problems.push(`Dockerfile USER is ${user}, the chart runs as ${want}`);
  if (!/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m.test(dockerfile))
    problems.push('the Dockerfile ENTRYPOINT is not ["/usr/bin/tini", "--"]');
  // As the chart's args (deploy/check/policy): a prototype-pollution bug throws, not spreads.
  if (!/^CMD .*\bexec node --disable-proto=throw\b/m.test(dockerfile))
    problems.push('the Dockerfile CMD does not run node with --disable-proto=throw');
  return { ok: problems.length === 0, output: problems.join('\n') };
}

/**
 * The runtime stage creates the data directory identity writes its development signing key
 * under (IDENTITY_DATA_DIR defaults to `<app>/.data/identity`: services/identity/src/config.ts)
 * and gives it to the image's USER (RUN mkdir + chown, or COPY --chown), so the non-root user
 * can create the key there.
 */
export function dockerfileOwnsDataDir(
  dockerfile = fs.readFileSync(path.join(DEPLOY, '..', 'Dockerfile'), 'utf8'),
) {
  const runtime = dockerfile.split(/^FROM\s/m).at(-1);
  // RUN instructions with their continuation lines joined.
  const runs = [...runtime.replace(/\\\n/g, ' ').matchAll(/^RUN\s+(.*)$/gm)].map((m) => m[1]);
  const workdir = [...runtime.matchAll(/^WORKDIR\s+(\S+)\s*$/gm)].at(-1)?.[1];
  const user = runtime.match(/^USER\s+(\d+)(?::(\d+))?\s*$/m);
  const problems = [];
  if (!workdir) problems.push('the runtime stage has no WORKDIR');
  if (!user) problems.push('the runtime stage has no numeric USER');
  if (problems.length === 0) {
    const dataDir = `${workdir.replace(/\/$/, '')}/.data`;
    const words = runs.flatMap((r) => r.split(/\s*&&\s*/)).map((c) => c.trim().split(/\s+/));
    const owner = new RegExp(`^${user[1]}(:${user[2] ?? '\\d+'})?$`);
    // Either made and given away by RUN (mkdir, chown), or copied in with its owner (COPY
    // --chown), which a runtime base without shell tools needs.
    const copies = [...runtime.matchAll(/^COPY\s+(.*)$/gm)].map((m) => m[1].trim().split(/\s+/));
    const isDataDir = (a) => a.replace(/\/$/, '') === dataDir;
    const copied = copies.find((w) => isDataDir(w.at(-1)));
    const makes = copied || words.some((w) => w[0] === 'mkdir' && w.slice(1).includes(dataDir));
    const chowns =
      copied?.some((a) => a.startsWith('--chown=') && owner.test(a.slice('--chown='.length))) ||
      words.some((w) => w[0] === 'chown' && w.some((a) => owner.test(a)) && w.slice(1).includes(dataDir));
    if (!makes) problems.push(`the runtime stage does not create ${dataDir} (identity's data directory)`);
    const named = user[2] ? `${user[1]}:${user[2]}` : user[1];
    if (!chowns) problems.push(`the runtime stage does not chown ${dataDir} to the USER ${named}`);
  }
  return { ok: problems.length === 0, output: problems.join('\n') };
}

/** What the build context must never carry: environment files and npm's configuration (tokens). */
const CREDENTIAL_FILES = ['**/.env', '**/.env.*', '**/.npmrc'];

/**
 * The build's credentials stay out of the context and of every layer: `.dockerignore` leaves out
 * `.env` files and `.npmrc` (where a registry token lives) wherever they are; the Dockerfile never
 * names an `.npmrc` but as a BuildKit secret mount (`--mount=type=secret,id=npmrc`, present for
 * the one RUN, in no layer); and the runtime stage copies from the earlier stages only, never
 * from the context.
 */
export function dockerfileKeepsCredentialsOut(
  dockerfile = fs.readFileSync(path.join(DEPLOY, '..', 'Dockerfile'), 'utf8'),
  dockerignore = fs.readFileSync(path.join(DEPLOY, '..', '.dockerignore'), 'utf8'),
) {
  const problems = [];
  const ignored = new Set(
    dockerignore
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')),
  );
  for (const pattern of CREDENTIAL_FILES)
    if (!ignored.has(pattern)) problems.push(`.dockerignore does not leave out ${pattern}`);
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n');
  for (const line of lines.filter((l) => !l.trim().startsWith('#'))) {
    const outsideMounts = line.replace(/--mount=type=secret,\S*/g, '');
    if (/\.npmrc/.test(outsideMounts))
      problems.push(`the Dockerfile handles an .npmrc outside a secret mount: ${line.trim()}`);
  }
  const runtime = dockerfile.split(/^FROM\s/m).at(-1);
  for (const [copy] of runtime.matchAll(/^COPY\s.*$/gm))
    if (!/--from=/.test(copy)) problems.push(`the runtime stage copies from the build context: ${copy}`);
  return { ok: problems.length === 0, output: problems.join('\n') };
}
