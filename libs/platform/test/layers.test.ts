import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import t from 'tap';

// The layers the platform's subpaths make real (DEVELOPERS.md, "Dependency rules"): what the core
// loads, each import rule of eslint.config.js on a file that breaks it and one that keeps it, and
// the circle check of `npm run lint` (dependency-cruiser) on a type-only circle.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const HEAVY = /\/node_modules\/(mongoose|fastify|@nats-io\/[^/]+)\//;

/** The heavy libraries (store, HTTP, NATS) a fresh process resolves while it imports `specifier`. */
function heavyLoadedBy(specifier: string): string[] {
  const probe = `
    import { registerHooks } from 'node:module';
    const heavy = new Set();
    registerHooks({
      resolve(specifier, context, next) {
        const resolved = next(specifier, context);
        const match = ${HEAVY}.exec(resolved.url);
        if (match) heavy.add(match[1]);
        return resolved;
      },
    });
    await import(${JSON.stringify(specifier)});
    console.log(JSON.stringify([...heavy].sort()));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`probe of ${specifier} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as string[];
}

t.test('the core subpath loads neither fastify, mongoose nor the NATS client', async (t) => {
  t.same(heavyLoadedBy('@support-desk/platform/core'), []);
  t.same(heavyLoadedBy('@support-desk/platform/metrics'), []);
  // The probe sees them where they are loaded: the HTTP and messaging subpaths.
  t.ok(heavyLoadedBy('@support-desk/platform/http').includes('fastify'));
  t.ok(heavyLoadedBy('@support-desk/platform/messaging').includes('@nats-io/transport-node'));
});

const eslint = new ESLint({ cwd: ROOT });

/** The import-rule messages eslint.config.js gives `code` as the file `file` (repository path). */
async function importErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const use = (subpath: string, name = 'x') =>
  `import { ${name} } from '@support-desk/platform/${subpath}';\nvoid ${name};\n`;
const useType = (subpath: string) =>
  `import type { X } from '@support-desk/platform/${subpath}';\nexport type Y = X;\n`;
const useFile = (file: string, name = 'x') => `import { ${name} } from '${file}';\nvoid ${name};\n`;
const useFileType = (file: string) => `import type { X } from '${file}';\nexport type Y = X;\n`;

// [file, code, the message expected (a part of it), or null when the import is allowed]
const CASES: [string, string, string | null][] = [
  ['services/requests/src/use-cases/fixture.ts', use('core'), null],
  ['services/requests/src/use-cases/fixture.ts', use('metrics'), null],
  ['services/requests/src/use-cases/fixture.ts', use('http'), 'use cases import only'],
  ['services/requests/src/use-cases/fixture.ts', use('store'), 'use cases import only'],
  ['services/requests/src/use-cases/fixture.ts', useType('messaging'), 'use cases import only'],
  ['services/requests/src/use-cases/fixture.ts', useType('clients'), 'use cases import only'],
  ['services/requests/src/routes/fixture.ts', use('http'), null],
  ['services/requests/src/routes/fixture.ts', use('clients'), null],
  ['services/requests/src/routes/fixture.ts', use('store'), 'only store/ imports'],
  ['services/requests/src/routes/fixture.ts', use('service'), 'routes are not wiring'],
  ['services/requests/src/composition.ts', use('http'), null],
  ['services/requests/src/composition.ts', use('service'), null],
  ['services/requests/src/composition.ts', use('store'), 'only store/ imports'],
  ['services/identity/src/admin/fixture.ts', use('store'), 'only store/ imports'],
  ['services/requests/src/store/fixture.ts', use('store'), null],
  ['services/requests/src/store/fixture.ts', use('messaging'), 'store/ uses'],
  ['services/requests/src/store/fixture.ts', use('http'), 'store/ uses'],
  ['services/requests/src/events/fixture.ts', use('messaging'), null],
  ['services/requests/src/events/fixture.ts', use('clients'), null],
  ['services/requests/src/events/fixture.ts', use('http'), 'events/ uses'],
  ['services/requests/src/events/fixture.ts', use('store'), 'events/ uses'],
  // identity's browser side, web/: over use cases and the HTTP layer; only composition imports it.
  ['services/identity/src/composition.ts', useFile('./web/index.js'), null],
  ['services/identity/src/routes/fixture.ts', useFile('../web/index.js'), 'only the composition root'],
  [
    'services/identity/src/use-cases/fixture.ts',
    useFile('../web/pages/lists.js'),
    'only the composition root',
  ],
  ['services/identity/src/store/fixture.ts', useFileType('../web/forms.js'), 'only the composition root'],
  ['services/identity/src/web/routes/fixture.ts', useFile('../../use-cases/login.js'), null],
  ['services/identity/src/web/routes/fixture.ts', use('http'), null],
  ['services/identity/src/web/routes/fixture.ts', use('clients'), null],
  ['services/identity/src/web/routes/fixture.ts', use('messaging'), 'web is not wiring'],
  ['services/identity/src/web/routes/fixture.ts', use('store'), 'only store/ imports'],
  ['services/identity/src/web/routes/fixture.ts', useFile('../../oauth/keys.js'), 'web imports use cases'],
  ['services/identity/src/web/routes/fixture.ts', useFile('../../routes/index.js'), 'web imports use cases'],
  ['services/identity/src/web/forms.ts', useFile('../oauth/forms.js'), null],
  ['services/identity/src/web/pages/fixture.tsx', useFile('../../store/index.js'), 'web reads data through'],
  ['services/identity/src/web/pages/fixture.tsx', useFileType('../../store/index.js'), null],
  ['services/identity/src/web/pages/fixture.tsx', useFile('mongoose'), 'web reaches the database'],
  [
    'services/requests/src/routes/fixture.ts',
    `import { x } from '@support-desk/platform';\nvoid x;\n`,
    'import a subpath',
  ],
  ['test/e2e/src/fixture.ts', `import { x } from '@support-desk/platform';\nvoid x;\n`, 'import a subpath'],
  [
    'tools/deskctl/src/fixture.ts',
    `import { x } from '@support-desk/platform';\nvoid x;\n`,
    'import a subpath',
  ],
  [
    'libs/contracts/src/fixture.ts',
    `import { x } from '@support-desk/platform';\nvoid x;\n`,
    'import a subpath',
  ],
];

t.test('each layer rule refuses the import it names and allows the rest', async (t) => {
  for (const [file, code, expected] of CASES) {
    const errors = await importErrors(file, code);
    const what = `${file}: ${code.split('\n')[0]}`;
    if (expected === null) t.same(errors, [], `allowed: ${what}`);
    else
      t.ok(errors.length === 1 && errors[0].includes(expected), `refused (${expected}): ${what}`, { errors });
  }
});

t.test('the circle check of npm run lint finds a circle of type-only imports', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-circle-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(
    path.join(dir, 'a.ts'),
    "import type { B } from './b.js';\nexport interface A { b?: B }\n",
  );
  fs.writeFileSync(path.join(dir, 'b.ts'), 'export interface B { n?: number }\n');
  const depcruise = (): { status: number | null; stdout: string } =>
    spawnSync(
      path.join(ROOT, 'node_modules', '.bin', 'depcruise'),
      ['--config', '.dependency-cruiser.cjs', dir],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
  t.equal(depcruise().status, 0, 'a → b is no circle');
  fs.writeFileSync(
    path.join(dir, 'b.ts'),
    "import type { A } from './a.js';\nexport interface B { a?: A }\n",
  );
  const circle = depcruise();
  t.equal(circle.status, 1, 'a → b → a fails the lint');
  t.match(circle.stdout, /no-circular/);
});
