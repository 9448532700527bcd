import type { HttpApp } from '@support-desk/platform/http';
import type { Deps } from '../use-cases/deps.js';
import { attachmentRoutes } from './attachments.js';
import { requestRoutes } from './requests.js';
import { slaPolicyRoutes } from './sla-policies.js';

/** Every public route of the requests service. */
export async function registerRoutes(app: HttpApp, deps: Deps): Promise<void> {
  requestRoutes(app, deps);
  slaPolicyRoutes(app, deps);
  // Encapsulated so the multipart parser applies to the upload route only.
  await app.register(async (scope) => attachmentRoutes(scope as HttpApp, deps));
}
