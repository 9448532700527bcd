export * from './env.js';
export * from './servers.js';
export * from './tls.js';
export * from './chromium.js';
export * from './identity-double.js';
export * from './round-trips.js';
export * from './slapd.js';
export * from './receiver.js';
