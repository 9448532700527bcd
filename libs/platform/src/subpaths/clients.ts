// @support-desk/platform/clients: typed request-reply clients and servers of the services'
// internal APIs (identity's look-ups, webhooks' admin operations), over messaging.
export * from '../identity-rpc.js';
export * from '../admin-rpc.js';
export * from '../requests-admin-rpc.js';
export * from '../webhooks-admin-rpc.js';
