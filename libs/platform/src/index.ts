export * from './subpaths/core.js';
export * from './subpaths/metrics.js';
export * from './subpaths/store.js';
export * from './subpaths/messaging.js';
export * from './subpaths/clients.js';
export * from './subpaths/http.js';
export * from './subpaths/service.js';
