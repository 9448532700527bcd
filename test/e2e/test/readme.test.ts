// The README walkthrough is executed: every ```sh block under README.md's "## Walkthrough" runs in
// order in one bash session against a test stack, with $SD
// and $ADMIN_KEY set as `npm start` would give them. Each command must exit 0 and each curl must
// get a 2xx. The browser step (OAuth login + consent) is played by headless Chromium.
import t from 'tap';
import { authorizeInBrowser, launchChromium } from '../src/browser.js';
import { BashSession, curlInvocations, loadWalkthrough, shellQuote } from '../src/shell.js';
import { ROOT, startStack } from '../src/stack.js';

const { source, blocks } = loadWalkthrough(ROOT);
// A stack of its own: the walkthrough starts from nothing (`deskctl bootstrap` makes the first admin).
const stack = await startStack(t, { private: true });
const boot = await stack.deskctlJson([
  'bootstrap',
  '--email',
  `walkthrough.admin.${stack.run}@example.com`,
  '--name',
  'Walkthrough Admin',
]);

const shell = new BashSession(ROOT, {
  ...process.env,
  ...stack.env,
  SD: stack.base,
  ADMIN_KEY: String(boot?.key),
});
t.teardown(() => shell.close());

t.test(`the walkthrough in ${source}`, async (t) => {
  // The walkthrough's tools (README: "You need … curl, jq and openssl").
  const missing = (
    await shell.run('for c in curl jq openssl npm; do command -v "$c" >/dev/null || echo "$c"; done')
  ).stdout.trim();
  t.equal(
    missing,
    '',
    `curl, jq, openssl and npm are installed (missing: ${missing || 'none'}; apt-get install ${missing})`,
  );
  t.ok(blocks.length >= 5, `${blocks.length} sh blocks under "## Walkthrough"`);
  const curls = blocks.flatMap(curlInvocations);
  t.ok(curls.length >= 15, `${curls.length} curl examples`);
  for (const opts of curls)
    t.match(opts, /^-[a-zA-Z]*f[a-zA-Z]*$/, `every curl fails on HTTP errors (-f…): ${opts}`);

  let transfers = 0;
  let browserUsed = false;
  for (const [i, block] of blocks.entries()) {
    const label = `block ${i + 1}: ${block.split('\n')[0].slice(0, 70)}`;
    // The one step a person does in a browser: log in and approve, then paste the code.
    if (/\$\{?CODE\b/.test(block) && !(await shell.variable('CODE'))) {
      const url = await shell.variable('AUTHORIZE_URL');
      const redirect = await shell.variable('REDIRECT_URI');
      const email = await shell.variable('AGENT_EMAIL');
      const password = await shell.variable('AGENT_PASSWORD');
      t.ok(
        url && redirect && email && password,
        'the walkthrough set AUTHORIZE_URL, REDIRECT_URI, AGENT_EMAIL, AGENT_PASSWORD',
      );
      const browser = await launchChromium();
      try {
        const context = await browser.newContext();
        let landed: URL | null = null;
        await context.route(`${redirect}**`, async (route) => {
          landed = new URL(route.request().url());
          await route.fulfill({ status: 200, contentType: 'text/html', body: '<p>code received</p>' });
        });
        const shown = await authorizeInBrowser(context, url, { email, password });
        await shown.page.waitForURL(`${redirect}**`, { timeout: 15_000 }).catch(() => undefined);
        const code = (landed as URL | null)?.searchParams.get('code');
        t.ok(code, 'the browser landed on the redirect URI with a code');
        t.equal((landed as URL | null)?.searchParams.get('state'), 'walkthrough', 'with the state');
        if (code) await shell.run(`CODE=${shellQuote(code)}`);
        browserUsed = true;
      } finally {
        await browser.close();
      }
    }
    const r = await shell.run(block);
    transfers += r.curlCodes.length;
    const exited = t.equal(r.status, 0, `${label}: exits 0`);
    const noFailure = t.same(r.failures, [], `${label}: no command failed`);
    const all2xx = t.ok(
      r.curlCodes.every((c) => c.code >= 200 && c.code < 300),
      `${label}: every curl got a 2xx (${r.curlCodes.map((c) => c.code).join(', ') || 'no curl'})`,
    );
    if (!(exited && noFailure && all2xx)) {
      t.comment(`stdout:\n${r.stdout.slice(-3000)}\nstderr:\n${r.stderr.slice(-3000)}`);
    }
  }
  t.ok(transfers >= curls.length, `${transfers} HTTP transfers made by the examples`);
  t.ok(browserUsed || !blocks.some((b) => /\$\{?CODE\b/.test(b)), 'the OAuth browser step was played');
});
