// Reads a tap run's raw TAP output for `npm test` (scripts/test.mjs): the counts and the list of
// failed tests printed before its last line.
import path from 'node:path';
import { ROOT } from '../infra.mjs';

/** The last `# { total: N, pass: N, fail: N, ... }` line of the run's raw TAP. */
export function parseTapSummary(text) {
  const lines = text.split('\n').filter((l) => /^# \{ total: \d+/.test(l));
  const last = lines.at(-1);
  if (!last) return null;
  const counts = { total: 0, pass: 0, fail: 0, todo: 0, skip: 0 };
  for (const m of last.matchAll(/(\w+): (\d+)/g)) counts[m[1]] = Number(m[2]);
  return counts;
}

/**
 * Reads tap's raw output. `counts` is the fallback when tap wrote no summary (e.g. it was killed):
 * leaf test points counted ourselves. A point is a leaf when no deeper-indented point precedes it since
 * the previous point at its level (so an empty subtest counts as one, like tap does); a failing subtest
 * with no failing leaf inside (crash, exit code, timeout) counts as one failure.
 * `failures` names each counted failure by its path (file › subtest › assertion), with where it failed
 * and the first lines of its diff or error, so a CI log's tail says what broke.
 */
export function readTap(text) {
  const counts = { total: 0, pass: 0, fail: 0, todo: 0, skip: 0 };
  const failures = [];
  const deeper = [];
  const childFailed = [];
  const names = []; // names[indent]: the open `# Subtest:` at that indent
  let yaml = null; // { indent, lines, failure }
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const indent = line.length - line.trimStart().length;
    if (yaml) {
      if (indent === yaml.indent && line.trim() === '...') {
        if (yaml.failure) yaml.failure.detail = failureDetail(yaml.lines);
        yaml = null;
      } else yaml.lines.push(line.slice(yaml.indent));
      continue;
    }
    if (line.trim() === '---') {
      yaml = { indent, lines: [], failure: null };
      const last = failures.at(-1);
      if (last && last.indent === indent - 2 && !last.detail) yaml.failure = last;
      continue;
    }
    const sub = /^\s*# Subtest: (.*)$/.exec(line);
    if (sub) {
      names.length = indent;
      names[indent] = sub[1];
      continue;
    }
    const m = /^\s*(not ok|ok)\b\s*\d*\s*(?:-\s*)?([^#]*)(#\s*(todo|skip)\b)?/i.exec(line);
    if (!m) continue;
    const ok = m[1] === 'ok';
    const directive = m[4]?.toLowerCase();
    const isLeaf = !deeper[indent];
    const hadChildFail = Boolean(childFailed[indent]);
    deeper.length = indent;
    childFailed.length = indent;
    deeper[indent] = false;
    childFailed[indent] = false;
    for (let i = 0; i < indent; i++) deeper[i] = true;
    let failedHere = false;
    if (isLeaf || (!ok && !hadChildFail)) {
      counts.total++;
      if (directive === 'todo') counts.todo++;
      else if (directive === 'skip') counts.skip++;
      else if (ok) counts.pass++;
      else {
        counts.fail++;
        failedHere = true;
        const path = names.slice(0, indent).filter(Boolean);
        failures.push({ indent, path: [...path, m[2].trim()].join(' › '), detail: '' });
      }
    }
    names.length = indent;
    if (failedHere || hadChildFail) for (let i = 0; i < indent; i++) childFailed[i] = true;
  }
  return { counts, failures };
}

/** `at file:line` plus the first changed lines of a diff (or the error message) from a failure's YAML. */
function failureDetail(lines) {
  const parts = [];
  const file = lines.find((l) => /^\s*fileName: /.test(l));
  const lineNo = lines.find((l) => /^\s*lineNumber: /.test(l));
  if (file) {
    const f = file.replace(/^\s*fileName: /, '').replace(`${ROOT}${path.sep}`, '');
    parts.push(`at ${f}${lineNo ? `:${lineNo.replace(/^\s*lineNumber: /, '')}` : ''}`);
  }
  const diff = lines.filter((l) => /^\s+[-+](?![-+]{2})/.test(l) && !/^\s*-{3,}/.test(l)).slice(0, 4);
  if (diff.length) parts.push(diff.map((l) => l.trim()).join(' '));
  for (const key of ['message', 'signal', 'code', 'expired', 'found', 'wanted']) {
    const hit = lines.find((l) => new RegExp(`^\\s*${key}: `).test(l));
    if (hit && parts.length < 4) parts.push(hit.trim());
  }
  return parts.join('; ');
}

/** The failure list printed before the counts line (at most `max` entries, one line each). */
export function formatFailures(failures, max = 12) {
  if (failures.length === 0) return '';
  const shown = failures.slice(0, max).map((f) => {
    const text = `  not ok: ${f.path}${f.detail ? ` (${f.detail})` : ''}`;
    return text.length > 300 ? `${text.slice(0, 297)}...` : text;
  });
  if (failures.length > max) shown.push(`  ... and ${failures.length - max} more (see .tap/last-run.tap)`);
  return ['failed tests:', ...shown].join('\n');
}
