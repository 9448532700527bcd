// SCIM 2.0 conformance (issue 16): the PyPI checker scim2-tester (RFC 7643/7644: discovery
// endpoints, create, read, list with attributes, replace, PATCH add/replace/remove of every
// attribute, delete, an unknown URL) run against /scim/v2 through the gateway of a real stack,
// with a connection's bearer token. Every check must pass except the known failures below, each a
// documented decision (services/identity/README.md, SCIM section): a new failure fails this test,
// and so does a known failure that no longer fails (take it off the list and out of the README).
// The venv is installed by scripts/test/python-tools.mjs (npm test does it before the tests).
import path from 'node:path';
import t from 'tap';
import { installPythonTool, runTool } from '../src/python-tools.js';
import { ROOT, startStack } from '../src/stack.js';

/** What the checker may report as failed (ERROR or CRITICAL), by check key, with the reason. */
const KNOWN_FAILURES: Record<string, string> = {
  'as-is/User/object_creation':
    'a user is known by an email address: userName must be one, or emails must hold one (scim2-tester sends a UUID; the other User checks run with an email userName, see check.py)',
  'User/object_deletion':
    'DELETE /Users/:id deactivates: users are never removed (their history stays), so the user still answers, with active false',
  'User/check_add_attribute/emails':
    'a user has one email, its userName: emails answers that one (work, primary) whatever was added',
  'User/check_replace_attribute/emails':
    'a user has one email, its userName: emails answers that one (work, primary) whatever replaced it',
  'User/check_remove_attribute/emails': 'a user has one email, its userName: emails cannot be removed',
  'User/check_remove_attribute/displayName':
    'every user has a name: without displayName it comes from name.formatted, givenName familyName, or userName, and displayName answers it',
  'User/check_remove_attribute/active': 'every user is active or not: without active a user is active',
};

const FAILED = new Set(['ERROR', 'CRITICAL']);
const CHECKER_TIMEOUT_MS = 90_000;

interface CheckLine {
  key: string;
  title: string | null;
  resourceType: string | null;
  urn: string | null;
  status: string;
  reason: string;
}

const install = installPythonTool('scim2-tester');
if ('error' in install) {
  t.fail(install.error);
} else {
  // The checker makes some 200 calls in a few seconds: above the default per-connection limit.
  const stack = await startStack(t); // SCIM_RATE_LIMIT far above its calls (SHARED_STACK_ENV)

  t.test('scim2-tester against /scim/v2 through the gateway', async (t) => {
    const idp = await stack.deskctlJson(['idp', 'create', `conformance-${stack.tag}`, '--kind', 'scim']);
    const run = await runChecker(install.python, `${stack.origin}/scim/v2`, idp.token as string);
    t.equal(run.code, 0, `the checker ran (stderr: ${run.stderr.slice(-2000)})`);
    t.ok(run.summary, 'the checker printed its summary');
    t.comment(`scim2-tester: ${JSON.stringify(run.summary)}`);

    // A check is one key; it failed when any of its results did.
    const byKey = new Map<string, CheckLine[]>();
    for (const line of run.checks) byKey.set(line.key, [...(byKey.get(line.key) ?? []), line]);
    const failed = [...byKey].filter(([, lines]) => lines.some((l) => FAILED.has(l.status)));
    t.ok(byKey.size > 50, `the checker ran its checks (${byKey.size} keys)`);

    for (const [key, lines] of failed) {
      const why = lines.find((l) => FAILED.has(l.status))?.reason ?? '';
      if (KNOWN_FAILURES[key]) t.comment(`known failure ${key}: ${KNOWN_FAILURES[key]}`);
      else t.fail(`${key}: ${why}`);
    }
    const failedKeys = new Set(failed.map(([key]) => key));
    for (const key of Object.keys(KNOWN_FAILURES)) {
      t.ok(failedKeys.has(key), `known failure ${key} still fails (else take it off the list)`, {
        statuses: byKey.get(key)?.map((l) => l.status) ?? 'not reported',
      });
    }
    for (const [key, lines] of byKey) {
      const notes = lines.filter((l) => l.status === 'DEVIATION' || l.status === 'SKIPPED');
      for (const note of notes) t.comment(`${note.status} ${key}: ${note.reason.split('\n')[0]}`);
    }
  });
}

async function runChecker(python: string, url: string, token: string) {
  const { code, stdout, stderr } = await runTool(
    python,
    [path.join(ROOT, 'test/tools/scim2-tester/check.py'), '--url', url, '--token', token],
    { timeoutMs: CHECKER_TIMEOUT_MS },
  );
  const checks: CheckLine[] = [];
  let summary: Record<string, number> | null = null;
  for (const text of stdout.split('\n')) {
    if (!text.trim()) continue;
    const line = JSON.parse(text) as CheckLine & { summary?: Record<string, number> };
    if (line.summary) summary = line.summary;
    else checks.push(line);
  }
  return { code, stderr, checks, summary };
}
