#!/usr/bin/env node
// Validates everything in deploy/, offline, down to a server-side dry run against a real
// kube-apiserver (deploy/README.md, "Validation").
//
//   node scripts/deploy-check.mjs            build the tools if needed, then run every check
//   node scripts/deploy-check.mjs tools      only build the tools (CI starts this early)
//   node scripts/deploy-check.mjs generate   regenerate what is generated: the kustomize bases from
//                                            the chart, the chart's rules and dashboard from
//                                            deploy/observability, the chart's parameters table
//
// The last line is `deploy check: N passed, N failed`; the exit code is non-zero on any failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { startControlPlane } from './deploy/apiserver.mjs';
import {
  conftest,
  dockerfileAgrees,
  dockerfileKeepsCredentialsOut,
  dockerfileOwnsDataDir,
  helmLint,
  helmServerDryRun,
  helmTemplate,
  kubeconform,
  kubectl,
  kubeScore,
  prepareCluster,
  serverDryRun,
  writeCrdSchemas,
} from './deploy/checks.mjs';
import {
  CHART,
  DEPLOY,
  kustomizeDir,
  NAMESPACE,
  RELEASES,
  releaseArgs,
  render,
  syncKustomizeBases,
  valueArgs,
  valuesFile,
} from './deploy/render.mjs';
import { chartReadme, renderUmbrella } from './deploy/chart-docs.mjs';
import { alertsHaveRunbooksAndTests, syncObservability } from './deploy/observability.mjs';
import { ensureTools, SCHEMA_VERSIONS } from './deploy/tools.mjs';

const NEWEST = SCHEMA_VERSIONS.at(-1);
const FIXTURES = path.join(DEPLOY, 'check', 'fixtures');
const KUSTOMIZE_EXAMPLE = path.join(kustomizeDir(), 'overlays', 'example');

let passed = 0;
let failed = 0;

function report(name, { ok, output }, { expectFailure = null } = {}) {
  // A fixture passes when its checker fails for the reason the fixture names.
  const good = expectFailure === null ? ok : !ok && output.includes(expectFailure);
  if (good) passed++;
  else failed++;
  console.log(`${good ? 'ok  ' : 'FAIL'} ${name}`);
  if (!good) {
    const why =
      expectFailure === null
        ? output
        : `expected the checker to fail with "${expectFailure}", it ${ok ? 'passed' : 'failed otherwise'}:\n${output}`;
    console.log(why.replace(/^/gm, '     '));
  }
}

function attempt(name, fn) {
  try {
    return fn();
  } catch (err) {
    report(name, { ok: false, output: err.message });
    return null;
  }
}

/** Each fixture says which checker must reject it and with which message: `# expect: <checker>: <text>`. */
function fixtures() {
  return fs
    .readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => {
      const file = path.join(FIXTURES, f);
      const m = fs.readFileSync(file, 'utf8').match(/^# expect: ([a-z-]+): (.+)$/m);
      if (!m) throw new Error(`${f}: no "# expect: <checker>: <message>" line`);
      return { name: f, file, checker: m[1], message: m[2].trim() };
    });
}

async function check() {
  ensureTools();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-deploy-check-'));
  try {
    const crdSchemas = path.join(work, 'crd-schemas');
    writeCrdSchemas(crdSchemas);
    const values = YAML.parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8'));
    report('Dockerfile agrees with the chart (user, tini)', dockerfileAgrees(values));
    report("Dockerfile gives identity's data directory to its non-root user", dockerfileOwnsDataDir());
    // As the fixtures below prove for the manifest checkers: this one can fail.
    const dockerfile = fs.readFileSync(path.join(DEPLOY, '..', 'Dockerfile'), 'utf8');
    report(
      'a Dockerfile that does not chown the data directory is rejected',
      dockerfileOwnsDataDir(dockerfile.replace(/\bchown\b/g, 'true')),
      { expectFailure: 'does not chown' },
    );
    report('no credential in the build context or the image (.env, .npmrc)', dockerfileKeepsCredentialsOut());
    const dockerignore = fs.readFileSync(path.join(DEPLOY, '..', '.dockerignore'), 'utf8');
    report(
      'a .dockerignore that lets .env files in is rejected',
      dockerfileKeepsCredentialsOut(dockerfile, dockerignore.replace(/^\*\*\/\.env$/m, '')),
      { expectFailure: 'does not leave out **/.env' },
    );
    report(
      'a Dockerfile that copies an .npmrc into the image is rejected',
      dockerfileKeepsCredentialsOut(
        dockerfile.replace(/^(USER .*)$/m, 'COPY --from=manifests /src/.npmrc ./\n$1'),
      ),
      { expectFailure: 'handles an .npmrc outside a secret mount' },
    );

    // helm lint and render, for every release at the oldest and the newest Kubernetes.
    const rendered = {};
    for (const release of RELEASES) {
      for (const version of SCHEMA_VERSIONS) {
        report(
          `helm lint --strict ${release.id} (Kubernetes ${version})`,
          helmLint(CHART, version, valueArgs(release)),
        );
        const text = attempt(`helm template ${release.id} (Kubernetes ${version})`, () =>
          render(release, version),
        );
        if (text === null) continue;
        const file = path.join(work, `${release.id}-${version}.yaml`);
        fs.writeFileSync(file, text);
        (rendered[version] ??= []).push({ id: release.id, file });
      }
    }

    // The chart as a subchart of an umbrella chart (`global`, an `enabled` condition).
    const umbrella = attempt("helm template: the chart as an umbrella chart's subchart", () =>
      renderUmbrella(NEWEST, work),
    );
    if (umbrella !== null) {
      report("helm template: the chart as an umbrella chart's subchart", { ok: true, output: '' });
      const file = path.join(work, `umbrella-${NEWEST}.yaml`);
      fs.writeFileSync(file, umbrella);
      (rendered[NEWEST] ??= []).push({ id: 'umbrella', file });
    }

    // Generated from deploy/observability and values.yaml: the chart's rules, dashboard, README.
    const observability = syncObservability({ write: false });
    report("the chart's rules and dashboard are generated from deploy/observability", {
      ok: observability.length === 0,
      output: `stale: ${observability.join(', ')} (run: npm run deploy:generate)`,
    });
    report('every alert has a runbook and a promtool test that fires it', alertsHaveRunbooksAndTests());
    const rules = fs.readFileSync(path.join(DEPLOY, 'observability', 'prometheus', 'rules.yaml'), 'utf8');
    report(
      'an alert without a runbook_url is rejected',
      alertsHaveRunbooksAndTests(rules.replace(/^\s*runbook_url: .*\n/m, '')),
      { expectFailure: 'runbook_url must be' },
    );
    const readme = attempt("the chart's parameters table is generated from values.yaml", () =>
      chartReadme({ write: false }),
    );
    if (readme)
      report("the chart's parameters table is generated from values.yaml", {
        ok: readme.length === 0,
        output: `stale: ${readme.join(', ')} (run: npm run deploy:generate)`,
      });

    // kustomize: the bases are the chart's render (regenerated here), the example overlay builds.
    const stale = attempt('kustomize bases are generated from the chart', () =>
      syncKustomizeBases(NEWEST, { write: false }),
    );
    if (stale)
      report('kustomize bases are generated from the chart', {
        ok: stale.length === 0,
        output: `stale: ${stale.join(', ')} (run: npm run deploy:generate)`,
      });
    const built = kubectl('/dev/null', ['kustomize', KUSTOMIZE_EXAMPLE]);
    report('kubectl kustomize deploy/kustomize/overlays/example', built);
    if (built.ok) {
      const file = path.join(work, 'kustomize-example.yaml');
      fs.writeFileSync(file, built.output);
      for (const version of SCHEMA_VERSIONS) rendered[version]?.push({ id: 'kustomize-example', file });
    }

    for (const version of SCHEMA_VERSIONS) {
      const files = (rendered[version] ?? []).map((r) => r.file);
      report(`kubeconform -strict, Kubernetes ${version}`, kubeconform(files, version, crdSchemas));
    }
    const newest = rendered[NEWEST] ?? [];
    report('kube-score', kubeScore(newest.map((r) => r.file)));
    for (const r of newest) report(`conftest (our rules): ${r.id}`, conftest(r.file));

    // A real API server: every object through validation and admission, then helm's own dry run.
    const plane = await startControlPlane();
    try {
      prepareCluster(plane.kubeconfig);
      for (const r of newest)
        report(`kubectl apply --dry-run=server: ${r.id}`, serverDryRun(plane.kubeconfig, r.file));
      for (const release of RELEASES)
        report(
          `helm install --dry-run=server: ${release.id}`,
          helmServerDryRun(plane.kubeconfig, releaseArgs(release)),
        );

      // Each checker must reject its broken fixture, for the reason the fixture names.
      for (const f of fixtures()) {
        const name = `fixture ${f.name} is rejected by ${f.checker}`;
        const run = {
          'helm-lint': () => helmLint(CHART, NEWEST, ['-f', valuesFile('identity'), '-f', f.file]),
          // helm lint reports a template's `fail` as information only: render to see it.
          'helm-template': () => helmTemplate(CHART, NEWEST, ['-f', valuesFile('identity'), '-f', f.file]),
          kubeconform: () => kubeconform([f.file], NEWEST, crdSchemas),
          'kube-score': () => kubeScore([f.file]),
          conftest: () => conftest(f.file),
          apiserver: () => serverDryRun(plane.kubeconfig, f.file),
        }[f.checker];
        if (!run) report(name, { ok: false, output: `unknown checker ${f.checker}` });
        else report(name, run(), { expectFailure: f.message });
      }
    } finally {
      await plane.stop();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function main(command = 'check') {
  if (command === 'tools') {
    ensureTools();
    return 0;
  }
  if (command === 'generate') {
    ensureTools();
    const written = [
      ...syncObservability({ write: true }),
      ...chartReadme({ write: true }),
      ...syncKustomizeBases(NEWEST, { write: true }),
    ];
    console.log(written.length ? `wrote ${written.join(', ')}` : 'everything generated is up to date');
    return 0;
  }
  if (command !== 'check') {
    console.error(`usage: deploy-check.mjs [check|tools|generate]`);
    return 2;
  }
  const started = Date.now();
  try {
    await check();
  } catch (err) {
    report('deploy check', { ok: false, output: err.stack ?? String(err) });
  }
  if (passed + failed === 0) failed++;
  console.log(`deploy check (${((Date.now() - started) / 1000).toFixed(0)} s, namespace ${NAMESPACE})`);
  console.log(`deploy check: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main(process.argv[2]).then((code) => process.exit(code));
