// Operator commands for webhooks: `webhooks replay`, the bulk replay for an endpoint that was down.
import { type OperatorCommand, withTemporal } from '../admin/command.ts';
import { OperatorRefusal, UsageError } from '../admin/errors.ts';
import { flag, instant, oneOf, uuid } from '../admin/flags.ts';
import { replayDelivery } from './service.ts';
import { DELIVERY_STATUSES, deliveriesCreatedBetween, findEndpoint } from './store.ts';

export const webhookCommands: OperatorCommand[] = [
  {
    name: 'webhooks replay',
    description:
      'Delivers again now (same webhook-id, a new replay_id) every delivery to the endpoint created in [since, until)',
    mutates: true,
    flags: {
      endpoint: flag.required('ID', "the endpoint's id (refused unless it is listening)"),
      since: flag.required('T', 'from this ISO 8601 time (e.g. 2026-11-23T08:00:00Z)'),
      until: flag.optional('T', 'up to this time (default: now)'),
      status: flag.optional(DELIVERY_STATUSES.join('|'), 'only the deliveries in this status'),
    },
    async run(em, flags, config) {
      const endpointId = flags.get('endpoint', uuid('an endpoint id'));
      const since = flags.get('since', instant);
      const until = flags.optional('until', instant) ?? new Date();
      if (until <= since) throw new UsageError('--until must be after --since');
      const status = flags.optional('status', oneOf(DELIVERY_STATUSES));
      const endpoint = await findEndpoint(em, endpointId);
      if (!endpoint) throw new OperatorRefusal('not_found', `no webhook endpoint ${endpointId}`);
      if (endpoint.status !== 'listening') {
        throw new OperatorRefusal(
          'wrong_status',
          `endpoint ${endpointId} is ${endpoint.status}: nothing can be delivered to it`,
        );
      }
      const rows = await deliveriesCreatedBetween(em, endpointId, { since, until, status });
      const replayed = await withTemporal(config, async (client) => {
        const done = [];
        for (const row of rows) {
          done.push(
            await replayDelivery(
              { client, taskQueue: config.webhookTaskQueue, scheduleMs: config.webhookRetryScheduleMs },
              em,
              row,
            ),
          );
        }
        return done;
      });
      return {
        endpoint_id: endpointId,
        since: since.toISOString(),
        until: until.toISOString(),
        status: status ?? null,
        count: replayed.length,
        replayed,
      };
    },
  },
];
