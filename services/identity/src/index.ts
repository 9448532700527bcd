export { buildApp } from './app.js';
export { identityConfigSchema, loadIdentityConfig } from './config.js';
export { createKeyring } from './oauth/keys.js';
export { createRuntime } from './runtime.js';
