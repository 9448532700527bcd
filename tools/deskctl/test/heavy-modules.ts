import { registerHooks } from 'node:module';

/*
 * Preloaded (`node --import`) into a deskctl process by deskctl-cli.test.ts: records which of the
 * heavy libraries (the store's, NATS', HTTP's, and TypeBox with every contract schema) the process
 * resolved, and prints them on standard
 * error as it exits (`heavy modules: [...]`), so a test sees what help or a usage error loaded.
 */
const HEAVY = /\/node_modules\/(mongoose|fastify|@nats-io\/[^/]+|@sinclair\/typebox|typebox)\//;
const loaded = new Set<string>();
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const heavy = HEAVY.exec(resolved.url);
    if (heavy) loaded.add(heavy[1]);
    return resolved;
  },
});
process.on('exit', () => process.stderr.write(`heavy modules: ${JSON.stringify([...loaded].sort())}\n`));
