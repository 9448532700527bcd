// Loaded (`node --import`) into every test file's process by test-runner.mjs. A file whose
// set-up at the top level fails (a rejected top-level `await`: a server that did not start, a
// missing tool) exits with code 1 before any assertion, and Node prints the error to stderr only,
// so the run's list of failed tests named the file and not why. Here the error becomes a failing
// assertion of that file, with its message and stack, in the TAP that the summary reads. The
// file still exits non-zero; nothing else changes.
import t from 'tap';

process.on('uncaughtExceptionMonitor', (err, origin) => {
  // tap reports uncaught exceptions itself; a rejected top-level await arrives as a rejection.
  if (origin !== 'unhandledRejection') return;
  const error = err instanceof Error ? err : new Error(String(err));
  t.fail(`the file stopped before its tests ended: ${error.message}`, { stack: error.stack });
  t.end();
});
