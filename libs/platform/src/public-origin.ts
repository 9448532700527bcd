import { ConfigError } from './config.js';

/** A host only this machine reaches: `localhost`, 127.0.0.0/8 or `[::1]`. */
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The public origin (`OAUTH_ISSUER`: the gateway's URL, where the sign-in pages and the console
 * set their cookies) must be https in production: over plain http the session and CSRF cookies
 * can carry neither `Secure` nor the `__Host-` prefix, and cookies, passwords and tokens cross
 * the network in clear. Plain http stays allowed on loopback (a single host trying the stack,
 * which compose publishes on 127.0.0.1 only).
 */
export function checkPublicOrigin(name: string, value: string, nodeEnv: string): void {
  if (nodeEnv !== 'production') return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`Invalid configuration: ${name} is not a URL`);
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOST.test(url.hostname))) return;
  throw new ConfigError(
    `Invalid configuration: ${name} must be an https:// origin in production (plain http only on loopback, such as http://127.0.0.1:8080): the console's cookies could not be Secure`,
  );
}
