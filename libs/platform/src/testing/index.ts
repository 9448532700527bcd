export * from './env.js';
export * from './servers.js';
