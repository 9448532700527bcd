#!/usr/bin/env node
// Rewrites imports of the platform's old root barrel into imports of its subpaths (issue 33):
//
//   node scripts/dev/platform-imports.mjs            rewrite, then prettier on the files changed
//   node scripts/dev/platform-imports.mjs --check    only list what still imports the barrel
//
// Every `import … from '@support-desk/platform'` (and `export … from`, and
// `const { … } = await import('@support-desk/platform')`) in services/, tools/, libs/ and test/
// becomes one import per subpath (`@support-desk/platform/core`, `/http`, …), merged into an
// import of that subpath the file already has; type-only names stay type-only. In libs/platform
// itself, a relative import of `src/index.js` becomes one of `src/subpaths/<subpath>.js`.
// Which subpath holds a name is read from the subpath entries (libs/platform/src/subpaths/*.ts)
// with the TypeScript compiler, so the map follows the code. Re-running changes nothing once no
// barrel import is left (idempotent). A name no subpath exports, a namespace import or a dynamic
// import it cannot split is printed with its file and line, the file is left as it is, and the
// exit code is 1.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PACKAGE = '@support-desk/platform';
const PLATFORM_SRC = path.join(ROOT, 'libs', 'platform', 'src');
const SUBPATHS_DIR = path.join(PLATFORM_SRC, 'subpaths');
const BARREL = path.join(PLATFORM_SRC, 'index');
const SCANNED = ['services', 'tools', 'libs', 'test'];
const EXTENSIONS = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;

/** name → { subpath, typeOnly } from the subpath entries, through the type checker. */
function subpathMap() {
  const entries = fs
    .readdirSync(SUBPATHS_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(SUBPATHS_DIR, f));
  const program = ts.createProgram(entries, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const map = new Map();
  const clashes = [];
  for (const file of entries) {
    const subpath = path.basename(file, '.ts');
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file));
    if (!moduleSymbol) continue; // an entry without exports
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const typeOnly = (target.flags & ts.SymbolFlags.Value) === 0;
      const name = exported.getName();
      const seen = map.get(name);
      if (seen && seen.subpath !== subpath) clashes.push(`${name}: ${seen.subpath} and ${subpath}`);
      map.set(name, { subpath, typeOnly });
    }
  }
  if (clashes.length)
    fail(`names exported by two subpaths (each name needs one home):\n  ${clashes.join('\n  ')}`);
  if (map.size === 0) fail(`no exports found in ${path.relative(ROOT, SUBPATHS_DIR)}`);
  return map;
}

function fail(message) {
  console.error(`platform-imports: ${message}`);
  process.exit(2);
}

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (EXTENSIONS.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Whether `specifier`, written in `file`, names the barrel; how to name a subpath from there. */
function barrelOf(file, specifier) {
  if (specifier === PACKAGE) return (subpath) => `${PACKAGE}/${subpath}`;
  if (!specifier.startsWith('.')) return null;
  const resolved = path.resolve(path.dirname(file), specifier).replace(/\.(js|ts)$/, '');
  if (resolved !== BARREL) return null;
  return (subpath) => {
    const rel = path.relative(path.dirname(file), path.join(SUBPATHS_DIR, `${subpath}.js`));
    return rel.startsWith('.') ? rel : `./${rel}`;
  };
}

const specifierText = (node) => (node && ts.isStringLiteral(node) ? node.text : null);

/** `{ a, type B as C }` of named imports or exports, as {name, alias, typeOnly}. */
const elementsOf = (elements, declTypeOnly) =>
  elements.map((el) => ({
    name: (el.propertyName ?? el.name).text,
    alias: el.propertyName ? el.name.text : null,
    typeOnly: declTypeOnly || el.isTypeOnly,
  }));

const elementText = (el, withTypeKeyword) =>
  `${withTypeKeyword && el.typeOnly ? 'type ' : ''}${el.name}${el.alias ? ` as ${el.alias}` : ''}`;

/** One declaration's text: `import type { … }` when every name is a type, else `type` per name. */
function declarationText(keyword, elements, specifier) {
  const allTypes = elements.every((el) => el.typeOnly);
  // The file's own order is kept (merged names last): the rewrite changes only specifiers.
  const names = elements.map((el) => elementText(el, !allTypes)).join(', ');
  return `${keyword}${allTypes ? ' type' : ''} { ${names} } from '${specifier}';`;
}

/** The edits of one file: {start, end, text}, and the problems that keep it unchanged. */
function planFile(file, source, map) {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const edits = [];
  const problems = [];
  const where = (node) =>
    `${path.relative(ROOT, file)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  const homeOf = (el, node) => {
    const home = map.get(el.name);
    if (!home) problems.push(`${where(node)}: no subpath exports '${el.name}'`);
    return home;
  };
  /** Elements grouped by subpath, in the order the subpaths first appear. */
  const bySubpath = (elements, node) => {
    const groups = new Map();
    for (const el of elements) {
      const home = homeOf(el, node);
      if (!home) continue;
      const typeOnly = el.typeOnly || home.typeOnly;
      if (!groups.has(home.subpath)) groups.set(home.subpath, []);
      groups.get(home.subpath).push({ ...el, typeOnly });
    }
    return groups;
  };

  // Imports of a subpath the file already has, to merge into (value and type-only apart).
  const existing = new Map();
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st)) continue;
    const spec = specifierText(st.moduleSpecifier);
    const named = st.importClause?.namedBindings;
    if (!spec || !named || !ts.isNamedImports(named) || st.importClause.name) continue;
    existing.set(spec, { node: st, elements: elementsOf(named.elements, st.importClause.isTypeOnly) });
  }
  const merged = new Map(); // specifier → elements added to an existing import

  for (const st of sf.statements) {
    const isImport = ts.isImportDeclaration(st);
    const isExport = ts.isExportDeclaration(st);
    if (!isImport && !isExport) continue;
    const spec = specifierText(st.moduleSpecifier);
    const name = spec && barrelOf(file, spec);
    if (!name) continue;
    let elements;
    if (isImport) {
      const clause = st.importClause;
      if (!clause) {
        problems.push(
          `${where(st)}: a side-effect import of the barrel (import each subpath needed instead)`,
        );
        continue;
      }
      if (clause.name || !clause.namedBindings || !ts.isNamedImports(clause.namedBindings)) {
        problems.push(`${where(st)}: a default or namespace import of the barrel: name what it uses`);
        continue;
      }
      elements = elementsOf(clause.namedBindings.elements, clause.isTypeOnly);
    } else {
      if (!st.exportClause || !ts.isNamedExports(st.exportClause)) {
        problems.push(`${where(st)}: \`export * from\` the barrel: name what it re-exports`);
        continue;
      }
      elements = elementsOf(st.exportClause.elements, st.isTypeOnly);
    }
    const groups = bySubpath(elements, st);
    const lines = [];
    for (const [subpath, els] of groups) {
      const target = name(subpath);
      const have = isImport ? existing.get(target) : undefined;
      if (have) {
        if (!merged.has(target)) merged.set(target, []);
        merged.get(target).push(...els);
      } else lines.push(declarationText(isImport ? 'import' : 'export', els, target));
    }
    edits.push({ start: st.getStart(sf), end: st.getEnd(), text: lines.join('\n') });
  }
  for (const [target, els] of merged) {
    const have = existing.get(target);
    const all = [...have.elements];
    for (const el of els)
      if (!all.some((a) => a.name === el.name && a.alias === el.alias && a.typeOnly === el.typeOnly))
        all.push(el);
    edits.push({
      start: have.node.getStart(sf),
      end: have.node.getEnd(),
      text: declarationText('import', all, target),
    });
  }

  // `const { a, b } = await import('@support-desk/platform')`: one statement per subpath.
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const spec = specifierText(node.arguments[0]);
      const name = spec && barrelOf(file, spec);
      if (name) planDynamic(node, name);
      return;
    }
    ts.forEachChild(node, visit);
  };
  const planDynamic = (call, name) => {
    const awaited = call.parent;
    const decl = awaited && ts.isAwaitExpression(awaited) ? awaited.parent : undefined;
    const list = decl && ts.isVariableDeclaration(decl) ? decl.parent : undefined;
    const statement = list?.parent;
    if (
      !decl ||
      !ts.isObjectBindingPattern(decl.name) ||
      list.declarations.length !== 1 ||
      !ts.isVariableStatement(statement) ||
      decl.name.elements.some((b) => b.dotDotDotToken || (b.propertyName && !ts.isIdentifier(b.propertyName)))
    ) {
      problems.push(
        `${where(call)}: a dynamic import of the barrel not of the form \`const { a, b } = await import(…)\``,
      );
      return;
    }
    const elements = decl.name.elements.map((b) => ({
      name: (b.propertyName ?? b.name).getText(sf),
      binding: b.getText(sf),
      typeOnly: false,
    }));
    const groups = bySubpath(elements, call);
    const keyword = list.flags & ts.NodeFlags.Const ? 'const' : 'let';
    const indent = source.slice(source.lastIndexOf('\n', statement.getStart(sf)) + 1, statement.getStart(sf));
    const text = [...groups]
      .map(
        ([subpath, els]) =>
          `${keyword} { ${els.map((e) => e.binding).join(', ')} } = await import('${name(subpath)}');`,
      )
      .join(`\n${indent}`);
    edits.push({ start: statement.getStart(sf), end: statement.getEnd(), text });
  };
  visit(sf);
  return { edits, problems };
}

function apply(source, edits) {
  let out = source;
  for (const e of edits.sort((a, b) => b.start - a.start)) {
    let end = e.end;
    // A declaration removed whole (merged elsewhere) takes its line with it.
    if (e.text === '' && out[end] === '\n') end += 1;
    out = out.slice(0, e.start) + e.text + out.slice(end);
  }
  return out;
}

function main() {
  const check = process.argv.includes('--check');
  const map = subpathMap();
  const files = SCANNED.flatMap((dir) => walk(path.join(ROOT, dir), []));
  const changed = [];
  const problems = [];
  for (const file of files) {
    const source = fs.readFileSync(file, 'utf8');
    if (!source.includes(PACKAGE) && !source.includes('index.js')) continue;
    const plan = planFile(file, source, map);
    problems.push(...plan.problems);
    if (plan.edits.length === 0) continue;
    changed.push(file);
    if (check || plan.problems.length) continue;
    fs.writeFileSync(file, apply(source, plan.edits));
  }
  const rel = (f) => path.relative(ROOT, f);
  if (check) {
    for (const f of changed) console.log(`imports the barrel: ${rel(f)}`);
  } else {
    const written = changed.filter((f) => !problems.some((p) => p.startsWith(`${rel(f)}:`)));
    if (written.length) {
      const prettier = path.join(ROOT, 'node_modules', '.bin', 'prettier');
      const r = spawnSync(prettier, ['--write', '--log-level', 'warn', ...written], {
        cwd: ROOT,
        stdio: 'inherit',
      });
      if (r.status !== 0) fail(`prettier failed on the rewritten files (exit ${r.status})`);
    }
    console.log(
      `platform-imports: ${written.length} file(s) rewritten, ${map.size} names in ${new Set([...map.values()].map((v) => v.subpath)).size} subpaths`,
    );
  }
  if (problems.length) {
    console.error(`platform-imports: ${problems.length} problem(s); those files are unchanged:`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  if (check && changed.length) process.exit(1);
}

main();
