// ESLint (flat config) with typescript-eslint; formatting is Prettier's job (`npm run lint` runs both).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const SERVICES = ['gateway', 'requests', 'identity', 'audit', 'webhooks'];
const PLATFORM = '@support-desk/platform';

/** The platform has no root entry: each import names its subpath (DEVELOPERS.md). */
const noBarrel = {
  regex: `^${PLATFORM}$`,
  message: `import a subpath of ${PLATFORM} (core, metrics, store, messaging, clients, http, service, testing); scripts/dev/platform-imports.mjs rewrites old imports`,
};

/** store/ and events/ never import upward. */
const upward = {
  group: ['../use-cases/*', '../routes/*', '../composition.js'],
  message: 'store/ and events/ never import upward',
};

/**
 * identity's browser side (web/: the console and the OAuth pages) is registered by the
 * composition root and imported by nothing else.
 */
const noWeb = {
  regex: '^\\.{1,2}/(\\.\\./)*web/',
  message: 'only the composition root imports web/ (the browser pages): routes, use cases and store never do',
};

/** Import specifiers of platform subpaths. */
const subpaths = (...names) => names.map((name) => `${PLATFORM}/${name}`);

/** A platform subpath only the named part of a service imports. */
const platformOnlyIn = (subpath, where) => ({
  group: subpaths(subpath),
  message: `only ${where} imports ${PLATFORM}/${subpath}`,
});

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.data/**', '.tap/**', '**/*.tsbuildinfo'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node }, ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    files: ['**/*.test.ts', '**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // The one shape (DEVELOPERS.md): services never import each other, and inside a service
  // dependencies point inward only (routes → use-cases → store / events). The platform's
  // subpaths make the layers real (DEVELOPERS.md, "Dependency rules"): use cases import only its
  // core and metrics; only store/ imports its store layer; HTTP only in routes and composition.
  restrictedImports('**/*.{ts,tsx,mts,js,mjs}', []),
  layer('services/*/{test,bench}/**/*.{ts,tsx}', []),
  layer('services/*/src/**/*.{ts,tsx}', [
    platformOnlyIn('store', 'store/'),
    platformOnlyIn('testing', 'tests'),
    noWeb,
  ]),
  // The composition root registers web/'s pages.
  layer('services/*/src/composition.ts', [
    platformOnlyIn('store', 'store/'),
    platformOnlyIn('testing', 'tests'),
  ]),
  layer('services/*/src/routes/**/*.ts', [
    noWeb,
    {
      group: ['mongoose', '@nats-io/*', 'ioredis'],
      message: 'routes reach the database and NATS through use cases',
    },
    platformOnlyIn('store', 'store/'),
    {
      group: subpaths('service', 'testing'),
      message: 'routes are not wiring: composition connects',
    },
  ]),
  // identity's browser pages (DEVELOPERS.md, "Dependency rules"): routes and pages over the use
  // cases and the HTTP layer (fastify, its plugins, @support-desk/platform/http, the form bodies
  // of oauth/forms.ts); never the store (its document types aside), events, messaging or wiring.
  layer('services/*/src/web/**/*.{ts,tsx}', [
    {
      group: ['mongoose', '@nats-io/*', 'ioredis'],
      message: 'web reaches the database and NATS through use cases',
    },
    platformOnlyIn('store', 'store/'),
    {
      group: subpaths('messaging', 'service', 'testing'),
      message: 'web is not wiring: the composition root connects',
    },
    {
      regex:
        '^(\\.\\./)+(routes|events|ldap|admin)/|^(\\.\\./)+(composition|wiring)\\.js$|^(\\.\\./)+oauth/(?!forms\\.js$)',
      message: 'web imports use cases and the HTTP layer only (of oauth/, the form bodies of forms.ts)',
    },
    {
      regex: '^(\\.\\./)+store/',
      allowTypeImports: true,
      message: "web reads data through use cases (the store's document types aside)",
    },
  ]),
  layer('services/*/src/use-cases/**/*.ts', [
    noWeb,
    {
      group: ['mongoose', 'fastify', '@fastify/*', '@nats-io/*', 'ioredis', '../routes/*'],
      message: 'use cases know no HTTP, database or messaging library: they call repositories and ports',
    },
    {
      regex: `^${PLATFORM}/(?!(core|metrics)$)`,
      message: `use cases import only ${PLATFORM}/core and /metrics: the rest is HTTP, the store, messaging or wiring`,
    },
  ]),
  layer('services/*/src/store/**/*.ts', [
    upward,
    noWeb,
    {
      group: subpaths('http', 'messaging', 'clients', 'service', 'testing'),
      message: `store/ uses ${PLATFORM}/core, /metrics and /store only`,
    },
  ]),
  layer('services/*/src/events/**/*.ts', [
    upward,
    noWeb,
    {
      group: subpaths('http', 'store', 'service', 'testing'),
      message: `events/ uses ${PLATFORM}/core, /metrics, /messaging and /clients only`,
    },
  ]),
  // A tool reaches a service only through the entry that service declares for it (DEVELOPERS.md,
  // "Dependency rules"): deskctl's code imports `@support-desk/identity/admin`, its tests also
  // `@support-desk/identity/testing` (the service to run commands against); nothing else of a service.
  toolLayer('tools/*/src/**/*.ts', ['admin']),
  toolLayer('tools/*/test/**/*.ts', ['admin', 'testing']),
  {
    files: ['services/*/src/use-cases/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'Property[key.type="Literal"][key.value=/^\\$/], Property[key.type="Identifier"][key.name=/^\\$/]',
          message: 'MongoDB operators belong in the repository (store/), not in a use case',
        },
      ],
    },
  },
);

/** `no-restricted-imports` of `patterns` on `files`. */
function restrictedImports(files, patterns) {
  return {
    files: [files],
    rules: { 'no-restricted-imports': ['error', { patterns: [noBarrel, ...patterns] }] },
  };
}

/** One layer of a service: its own rules plus "no service imports another". */
function layer(files, patterns) {
  return restrictedImports(files, [
    {
      group: SERVICES.flatMap((name) => [`@support-desk/${name}`, `**/${name}/src/**`]),
      message: 'services never import each other; share code through libs/',
    },
    ...patterns,
  ]);
}

/** A tool: of a service, only identity's declared `entries` (package.json `exports`). */
function toolLayer(files, entries) {
  return restrictedImports(files, [
    {
      regex: `^@support-desk/(?!identity/(${entries.join('|')})$)(${SERVICES.join('|')})(/.*)?$`,
      message: `a tool imports a service only through its declared entry (@support-desk/identity/${entries.join(' or /')})`,
    },
    { group: ['**/services/**'], message: 'a tool never reaches into a service: use its declared entry' },
  ]);
}
