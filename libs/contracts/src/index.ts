export * from './envelope.js';
export * from './events.js';
export * from './ids.js';
export * from './internal.js';
export * from './pagination.js';
export * from './scopes.js';
export * from './subjects.js';
