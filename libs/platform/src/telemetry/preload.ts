/**
 * The tracing entry point, loaded before a service's own modules with
 * `node --import @support-desk/platform/telemetry <server.js>` (npm start, the e2e stack, the
 * Dockerfile and the Helm chart all do): instrumentations patch a library only when they are
 * registered before it is loaded, and an ES module's imports are all loaded before its first line
 * runs. import-in-the-middle is told to hook only the modules the instrumentations ask for.
 */
import { register } from 'node:module';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { type TracingSettings, TracingSettingsError, tracingSettings } from './settings.js';
import { startTracing } from './tracing.js';

let settings: TracingSettings;
try {
  settings = tracingSettings();
} catch (err) {
  if (!(err instanceof TracingSettingsError)) throw err;
  // As a service reports any other invalid variable (see `startService`).
  process.stderr.write(`${process.argv[1] ?? 'service'}: invalid configuration: ${err.message}\n`);
  process.exit(1);
}
if (settings.enabled) {
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  startTracing(settings);
  await waitForAllMessagesAcknowledged();
}
