// @support-desk/platform/http: the fastify side: the app, contract routes, the principal guard,
// health, admission and call deadlines, input checks. Routes and composition import it.
export * from '../admission.js';
export * from '../call-deadline.js';
export { PUBLIC_MAX_HEADER_BYTES, SERVICE_MAX_HEADER_BYTES } from '../client-errors.js';
export * from '../contract-routes.js';
export * from '../health.js';
export * from '../http.js';
export * from '../one-time-ids.js';
export * from '../principal-guard.js';
export { checkInput } from '../validation.js';
