import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// `@support-desk/identity/admin` (src/admin/): the use cases and an admin session for deskctl,
// nothing of the service's HTTP side. What a process importing it loads, told by a resolve hook.

const hook = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from 'node:module';
const seen = new Set();
registerHooks({ resolve(s, c, next) {
  const r = next(s, c);
  const at = r.url.indexOf('/services/identity/dist/src/');
  if (at >= 0) seen.add(r.url.slice(at + '/services/identity/dist/src/'.length));
  if (r.url.includes('/node_modules/fastify/')) seen.add('fastify');
  return r;
} });
process.on('exit', () => process.stderr.write('identity modules: ' + JSON.stringify([...seen]) + '\\n'));
`)}`;

/** The identity modules (and `fastify`, if it does) a process resolves when it imports `specifier`. */
function loadedBy(specifier: string): string[] {
  const r = spawnSync(
    process.execPath,
    ['--import', hook, '--input-type=module', '-e', `await import('${specifier}')`],
    {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  const line = /identity modules: (.*)\n/.exec(r.stderr);
  if (r.status !== 0 || !line) throw new Error(`importing ${specifier}: exit ${r.status}\n${r.stderr}`);
  return JSON.parse(line[1]) as string[];
}

const httpSide = (modules: string[]) =>
  modules.filter((m) => /^(routes|web)\/|^composition\.js$|^oauth\/forms\.js$/.test(m));

t.test('the admin entry loads the use cases, not routes, the console, SCIM or OAuth pages', async (t) => {
  const admin = loadedBy('@support-desk/identity/admin');
  t.ok(admin.includes('admin/index.js') && admin.includes('use-cases/users.js'), 'the use cases load');
  t.same(httpSide(admin), [], 'nothing of the HTTP side');
  // Nor of the platform's (@support-desk/platform/http): its config needs only the core.
  t.notOk(admin.includes('fastify'), 'fastify is not loaded');
  t.notOk(
    admin.some((m) => m.startsWith('use-cases/scim/') && !/^use-cases\/scim\/(calls|errors)\.js$/.test(m)),
    `of SCIM only the base URL helper (${admin.filter((m) => m.includes('scim'))})`,
  );
  // The check sees the HTTP side where it is: the service's composition root loads it.
  const service = loadedBy('./dist/src/composition.js');
  t.ok(httpSide(service).length > 0, 'the composition root loads routes and the console');
  t.ok(service.includes('fastify'), 'and fastify');
});
