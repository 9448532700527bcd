#!/usr/bin/env node
// The deskctl bin: one run with the process's streams and environment, then its exit code.
import { runDeskctl } from './main.js';

runDeskctl(process.argv.slice(2)).then((code) => process.exit(code));
