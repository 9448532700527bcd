#!/usr/bin/env node
// The `deskctl` bin. A committed, executable entry point: the compiled CLI under dist/ loses its
// executable bit on every clean build, which would break `npx deskctl` after `npm ci && npm run build`.
import '../dist/src/deskctl.js';
