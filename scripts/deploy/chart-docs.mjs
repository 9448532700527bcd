// The chart's README parameters table (helm-docs, from values.yaml's `# --` comments) and the
// umbrella-chart render that proves the chart works as a subchart.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../infra/common.mjs';
import { CHART, DEPLOY, helm, NAMESPACE } from './render.mjs';
import { bin } from './tools.mjs';

const README = path.join(CHART, 'README.md');
const UMBRELLA = path.join(DEPLOY, 'check', 'umbrella');

/**
 * helm-docs (a Go tool pinned with the other checkers): chosen over @bitnami/readme-generator-for-helm
 * because it reads the `# --` comments beside each value (no second list of `@param` lines to keep
 * in step), documents values that have none with their type and default, and builds from the Go
 * module proxy like every other deploy tool, so it adds no npm dependency to the repository.
 */
function helmDocs() {
  const r = spawnSync(
    bin('helm-docs'),
    [
      '--chart-search-root',
      CHART,
      '--template-files',
      'README.md.gotmpl',
      '--dry-run',
      '--log-level',
      'error',
    ],
    { encoding: 'utf8', cwd: CHART },
  );
  if (r.status !== 0) throw new Error(`helm-docs: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Writes the chart's README (generate) or lists it when it differs from a fresh one (check). */
export function chartReadme({ write }) {
  const text = helmDocs();
  const current = fs.existsSync(README) ? fs.readFileSync(README, 'utf8') : null;
  if (current === text) return [];
  if (write) fs.writeFileSync(README, text);
  return [path.relative(ROOT, README)];
}

/**
 * `helm template` of deploy/check/umbrella with this chart as its dependency (copied into its
 * charts/, as `helm dependency build` would): the subcharts get Helm's `global` and an `enabled`
 * condition, which a strict schema must accept.
 */
export function renderUmbrella(kubeVersion, work) {
  const dir = path.join(work, 'umbrella');
  fs.cpSync(UMBRELLA, dir, { recursive: true });
  fs.cpSync(CHART, path.join(dir, 'charts', path.basename(CHART)), { recursive: true });
  const r = helm(['template', 'umbrella', dir, '--namespace', NAMESPACE, '--kube-version', kubeVersion]);
  if (r.status !== 0) throw new Error(`helm template umbrella: ${r.stderr.trim()}`);
  if (!/^kind: Deployment$/m.test(r.stdout)) throw new Error('the umbrella rendered no Deployment');
  return r.stdout;
}
