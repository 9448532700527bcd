#!/usr/bin/env node
// The `sd-seed` bin: a committed, executable entry point (the compiled CLI under dist/ loses its
// executable bit on every clean build).
import '../dist/src/cli.js';
