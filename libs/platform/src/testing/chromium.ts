/** Debian's Chromium (`CHROMIUM_PATH` overrides), which `npm test` installs for the browser tests. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Options for playwright-core's `chromium.launch`: headless, as root in a container (no sandbox,
 * no GPU), and quiet (no background networking, updates or sync talking to the internet).
 */
export function chromiumLaunchOptions() {
  letFunctionsTakeFunctionPrototypes();
  return {
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: 30_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  };
}

/**
 * playwright-core 1.65.1 (the latest release) formats a failed call's log with the `colors`
 * package it bundles, which gives a function another function as prototype with
 * `builder.__proto__ = proto` (colors.js pull request 70 replaces it with Object.setPrototypeOf; not
 * released). Under node --disable-proto=throw, which every test file runs with, that throws out of
 * Playwright's message loop: a failed browser step crashed its test file with ERR_PROTO_ACCESS
 * instead of saying what failed. So in the processes that drive Chromium, and only there, a
 * function may take a function as prototype through `__proto__`. Nothing else changes: reading
 * `__proto__` still throws, plain objects (all that JSON, queries and forms make) still throw, and
 * no data can hold a function.
 */
function letFunctionsTakeFunctionPrototypes(): void {
  if (Object.hasOwn(Function.prototype, '__proto__')) return;
  const inherited = Object.getOwnPropertyDescriptor(Object.prototype, '__proto__');
  Object.defineProperty(Function.prototype, '__proto__', {
    configurable: true,
    get() {
      return inherited?.get ? inherited.get.call(this) : undefined;
    },
    set(proto: unknown) {
      if (typeof this === 'function' && typeof proto === 'function') Object.setPrototypeOf(this, proto);
      else if (inherited?.set) inherited.set.call(this, proto);
    },
  });
}
