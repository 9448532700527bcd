import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { field, type FormBody, query } from '../forms.js';
import { ConfirmBody, consolePage, type SectionPath } from '../pages/frame.js';
import type { Admin, ConsoleKit } from './console-session.js';

const open = { config: { public: true } };

/**
 * `<section>/delete` of an item another service keeps (a webhook subscription, an SLA policy):
 * GET asks the service for the item (`?id=`) and shows what deleting it does, with a danger
 * button; its POSTed form deletes it through the service and returns to the list with
 * `?deleted=<id>`. A refusal or a service that does not answer is the list with the reason.
 */
export function deletionRoutes(
  pages: FastifyInstance,
  kit: ConsoleKit,
  spec: {
    section: SectionPath;
    /** The confirmation page's title ("Delete webhook"). */
    title: string;
    /** The confirmation question about the item, as the service has it (throws its refusal). */
    question: (request: FastifyRequest, admin: Admin, id: string) => Promise<string>;
    consequence: string;
    button: string;
    /** Where Cancel goes. */
    back: (id: string) => string;
    remove: (request: FastifyRequest, admin: Admin, id: string) => Promise<unknown>;
    failure: (err: unknown) => { status: number; message: string };
    /** The section's list page with an error, answered with `status`. */
    listWithError: (
      request: FastifyRequest,
      reply: FastifyReply,
      admin: Admin,
      error: string,
      status: number,
    ) => Promise<unknown>;
  },
): void {
  const path = `${spec.section}/delete`;
  pages.get(path, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const id = query(request.query, 'id') ?? '';
    try {
      const question = await spec.question(request, admin, id);
      const body = ConfirmBody({
        frame: admin.frame,
        action: path,
        id,
        question,
        consequence: spec.consequence,
        button: spec.button,
        back: spec.back(id),
      });
      return kit.send(reply, 200, consolePage(spec.title, spec.section, admin.frame, body));
    } catch (err) {
      const f = spec.failure(err);
      return spec.listWithError(request, reply, admin, f.message, f.status);
    }
  });

  pages.post(path, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const id = field((request.body ?? {}) as FormBody, 'id');
    try {
      await spec.remove(request, admin, id);
    } catch (err) {
      const f = spec.failure(err);
      return spec.listWithError(request, reply, admin, f.message, f.status);
    }
    return reply.redirect(`${spec.section}?deleted=${encodeURIComponent(id)}`, 303);
  });
}
