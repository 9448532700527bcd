/** Debian's Chromium (`CHROMIUM_PATH` overrides), which `npm test` installs for the browser tests. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Options for playwright-core's `chromium.launch`: headless, as root in a container (no sandbox,
 * no GPU), and quiet (no background networking, updates or sync talking to the internet).
 */
export function chromiumLaunchOptions() {
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
