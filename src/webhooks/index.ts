// The webhooks feature (decisions §7, §21): tenants' endpoints and their lifecycle, signed deliveries
// with their retries and replays, the sweep that wakes deliveries of an endpoint enabled again, and
// their operator commands.
import type { Feature } from '../feature.ts';
import { WEBHOOK_EVENT_TYPES } from './event-types.ts';
import { webhookCommands } from './admin.ts';
import { webhookRoutes } from './routes.ts';
import { WebhookService } from './service.ts';
import { webhookEntities } from './store.ts';
import { PausedDeliverySweep } from './sweep.ts';

export const webhooksFeature: Feature = {
  name: 'webhooks',
  entities: webhookEntities,
  events: WEBHOOK_EVENT_TYPES,
  commands: webhookCommands,
  sweeps: (context) => [new PausedDeliverySweep(context)],
  api(app, { config, orm, client, egress }) {
    const webhooks = new WebhookService({
      orm,
      client,
      // A replay that starts a new run starts it where deliveries run now (a running one is signalled where it is).
      taskQueue: config.webhookTaskQueue,
      encryptionKey: config.webhookEncryptionKey,
      scheduleMs: config.webhookRetryScheduleMs,
      egress,
    });
    webhookRoutes(app, { orm, webhooks });
  },
};
