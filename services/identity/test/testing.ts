/*
 * `@support-desk/identity/testing`: identity for the tests of a tool that drives it (deskctl,
 * tools/deskctl/test): the service on a real store and NATS (`harness`), the OAuth forms, and the
 * internals such a test sets up or checks against. Tests only; a tool's code imports `./admin`.
 */
export * from './helpers.js';
export { authorizeThroughForms, FormBrowser, pkceAuthorizeUrl } from './oauth-flow.js';
export { bindPasswordReader } from '../src/ldap/bind-password.js';
export { identityProviderModel } from '../src/store/identity-providers.js';
export { cliContext } from '../src/use-cases/deps.js';
export {
  authenticateScimToken,
  findIdentityProvider,
  provisioningContext,
  updateIdentityProvider,
} from '../src/use-cases/identity-providers.js';
export { runLdapSync } from '../src/use-cases/ldap-sync.js';
export { provisionUser } from '../src/use-cases/provisioning.js';
export { createUser } from '../src/use-cases/users.js';
