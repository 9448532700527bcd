import {
  CreateWebhookBody,
  DeliveryListQuery,
  UpdateWebhookBody,
  type AdminActor,
  WebhooksAdminEnvelope,
  type WebhooksAdminOp,
  type WebhooksAdminReplies,
  WebhookListQuery,
  TriggerTestEventFields,
  webhooksRouteSchemas as schemas,
} from '@support-desk/contracts';
import { adminContextOf, adminFieldsOf, serveAdminRpc } from '@support-desk/platform/clients';
import { checkInput } from '@support-desk/platform/http';
import type { MessageVerifier, NatsConnection } from '@support-desk/platform/messaging';
import { listDeliveries, ping, replayDelivery } from '../use-cases/deliveries.js';
import type { Deps } from '../use-cases/deps.js';
import { triggerTestEvent } from '../use-cases/test-events.js';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rotateSecret,
  updateSubscription,
} from '../use-cases/subscriptions.js';
import { toSubscriptionView } from '../use-cases/views.js';

type Request = Record<string, unknown>;
type Reply = WebhooksAdminReplies[WebhooksAdminOp];
const fieldsOf = adminFieldsOf;

const idOf = (request: Request) =>
  checkInput<{ id: string }>(schemas['GET /v1/webhooks/:id'].params, { id: request.id }, 'params').id;

/** One op: the same use case as its HTTP route, as the administrator who asked. */
async function answer(deps: Deps, request: Request): Promise<Reply> {
  const { op, actor } = checkInput<{ op: WebhooksAdminOp; actor: AdminActor }>(
    WebhooksAdminEnvelope,
    request,
    'body',
  );
  const ctx = adminContextOf(actor);
  switch (op) {
    case 'list':
      return {
        ok: true,
        ...(await listSubscriptions(deps, fieldsOf(request, WebhookListQuery, 'querystring'))),
      };
    case 'get':
      return {
        ok: true,
        webhook: toSubscriptionView(await getSubscription(deps, idOf(request)), deps.clock()),
      };
    case 'create':
      return {
        ok: true,
        webhook: await createSubscription(deps, ctx, fieldsOf(request, CreateWebhookBody, 'body')),
      };
    case 'update': {
      const id = idOf(request);
      const changes = fieldsOf<UpdateWebhookBody>(request, UpdateWebhookBody, 'body');
      return { ok: true, webhook: await updateSubscription(deps, ctx, id, changes) };
    }
    case 'delete':
      return { ok: true, ...(await deleteSubscription(deps, ctx, idOf(request))) };
    case 'rotateSecret':
      return { ok: true, webhook: await rotateSecret(deps, ctx, idOf(request)) };
    case 'ping':
      return { ok: true, delivery: await ping(deps, idOf(request)) };
    case 'deliveries': {
      const id = idOf(request);
      const query = fieldsOf<DeliveryListQuery>(request, DeliveryListQuery, 'querystring');
      return { ok: true, ...(await listDeliveries(deps, id, query)) };
    }
    case 'replay': {
      const params = schemas['POST /v1/webhooks/:id/deliveries/:deliveryId/replay'].params;
      const p = checkInput<{ id: string; deliveryId: string }>(
        params,
        { id: request.id, deliveryId: request.deliveryId },
        'params',
      );
      return { ok: true, delivery: await replayDelivery(deps, p.id, p.deliveryId) };
    }
    case 'trigger': {
      const fields = fieldsOf<TriggerTestEventFields>(request, TriggerTestEventFields, 'body');
      return { ok: true, ...(await triggerTestEvent(deps, ctx, fields)) };
    }
  }
}

/**
 * The webhooks admin RPC (`names.webhooksAdmin`): the settings console and deskctl manage
 * subscriptions through it, with the use cases the HTTP routes call, so the same checks, the same
 * answers and the same `system.config_changed` events (the administrator as actor, the console's
 * address). See `serveAdminRpc`: identity-signed requests only, refusals as the HTTP API words them.
 */
export const serveWebhooksAdmin = (nc: NatsConnection, deps: Deps, verifier: MessageVerifier) =>
  serveAdminRpc(nc, deps.names.webhooksAdmin, (request) => answer(deps, request), {
    verifier,
    logger: deps.logger,
  });
