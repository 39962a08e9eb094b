// The tenant CLI: `npm run --silent gateway -- <command>`, on the typed client, against
// GATEWAY_URL (default http://127.0.0.1:3000) with GATEWAY_API_KEY. Results go to stdout, as a
// readable table or, with --json, one JSON document per result; notes and refusals go to stderr.
// Exit codes: 0 done, 1 the gateway refused or could not be reached, 2 a usage error.
import { parseArgs } from 'node:util';
import { GatewayClientError, createGatewayClient, unwrap } from '../index.ts';
import { listen } from './listen.ts';
import { print, record, table } from './output.ts';
import { TRIGGERS } from './trigger.ts';
import { statementCsv } from '../statement-csv.ts';

class UsageError extends Error {
  /** Whether the usage text helps (a wrong command or flag), or only the message does (no key set). */
  readonly showUsage: boolean;
  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = options.showUsage ?? true;
  }
}

const USAGE = `usage: npm run --silent gateway -- <command> [options] [--json]

  listen --forward-to URL [--events a,b] [--after EVENT_ID]
                              forward each new event, signed with a session secret, to URL
  trigger <event-type>        (sandbox keys) make the objects that produce that event
  trigger --list              the event types trigger can make
  event-types                 the event catalog
  events list [--type T] [--limit N] [--page N]
  events get <event-id>
  deliveries list [--event-id ID] [--endpoint-id ID] [--status S] [--limit N] [--page N]
  deliveries replay <delivery-id>
  statement [--from WHEN] [--to WHEN] [--csv]
                              the wallet's statement (all pages); CSV oldest first with --csv

environment: GATEWAY_URL (default http://127.0.0.1:3000), GATEWAY_API_KEY (sk_test_… or sk_live_…)
`;

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  'forward-to': { type: 'string' },
  events: { type: 'string' },
  after: { type: 'string' },
  type: { type: 'string' },
  limit: { type: 'string' },
  page: { type: 'string' },
  'event-id': { type: 'string' },
  'endpoint-id': { type: 'string' },
  status: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  csv: { type: 'boolean' },
  list: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function whole(values: Values, name: 'limit' | 'page'): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number`);
  return Number(raw);
}

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, action, id] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stderr.write(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
  const apiKey = process.env.GATEWAY_API_KEY;
  if (!apiKey) {
    throw new UsageError('GATEWAY_API_KEY is not set: export GATEWAY_API_KEY=sk_test_… (your key)', {
      showUsage: false,
    });
  }
  const json = values.json ?? false;
  const client = createGatewayClient({ baseUrl, apiKey });

  switch (command) {
    case 'listen': {
      const forwardTo = values['forward-to'];
      if (!forwardTo || !URL.canParse(forwardTo)) throw new UsageError('listen needs --forward-to URL (http://…)');
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      await listen({
        baseUrl,
        apiKey,
        forwardTo,
        events: values.events?.split(',').map((type) => type.trim()),
        after: values.after,
        json,
        signal: stop.signal,
      });
      return 0;
    }
    case 'trigger': {
      if (values.list) {
        print(json, Object.keys(TRIGGERS), () => `${Object.keys(TRIGGERS).join('\n')}\n`);
        return 0;
      }
      if (action === undefined) throw new UsageError('trigger needs an event type (trigger --list shows them)');
      const step = TRIGGERS[action];
      if (!step) {
        throw new UsageError(
          `trigger cannot make ${action}; it can make: ${Object.keys(TRIGGERS).join(', ')} ` +
            '(any type can be sent as a sample with POST /api/v1/webhook-endpoints/{id}/test)',
        );
      }
      if (!apiKey.startsWith('sk_test_')) throw new UsageError('trigger runs with sandbox keys (sk_test_…) only');
      const made = await step(client);
      print(json, { triggered: action, ...made }, () => record({ triggered: action, ...made }));
      return 0;
    }
    case 'event-types': {
      const catalog = unwrap(await client.GET('/api/v1/event-types')).data.items;
      print(json, catalog, () => table(catalog.map(({ type, description }) => ({ type, description }))));
      return 0;
    }
    case 'events': {
      if (action === 'list') {
        const query = { type: values.type, limit: whole(values, 'limit'), page: whole(values, 'page') };
        const page = unwrap(await client.GET('/api/v1/events', { params: { query } })).data;
        print(json, page, () =>
          table(
            page.items.map(({ id, type, created_at }) => ({ id, type, created_at })),
            ['id', 'type', 'created_at'],
          ),
        );
        return 0;
      }
      if (action === 'get') {
        if (!id) throw new UsageError('events get needs an event id');
        const event = unwrap(await client.GET('/api/v1/events/{id}', { params: { path: { id } } })).data;
        print(json, event, () => `${JSON.stringify(event, null, 2)}\n`);
        return 0;
      }
      throw new UsageError('events list | events get <id>');
    }
    case 'deliveries': {
      if (action === 'list') {
        const query = {
          event_id: values['event-id'],
          endpoint_id: values['endpoint-id'],
          status: values.status as 'queued' | 'retrying' | 'succeeded' | 'failed' | undefined,
          limit: whole(values, 'limit'),
          page: whole(values, 'page'),
        };
        const page = unwrap(await client.GET('/api/v1/webhook-deliveries', { params: { query } })).data;
        print(json, page, () =>
          table(
            page.items.map((delivery) => ({
              id: delivery.id,
              event_type: delivery.event_type,
              endpoint_id: delivery.endpoint_id,
              status: delivery.status,
              attempts: delivery.attempt_count,
            })),
          ),
        );
        return 0;
      }
      if (action === 'replay') {
        if (!id) throw new UsageError('deliveries replay needs a delivery id');
        const replay = unwrap(
          await client.POST('/api/v1/webhook-deliveries/{id}/replay', { params: { path: { id } } }),
        ).data;
        print(json, replay, () => record(replay));
        return 0;
      }
      throw new UsageError('deliveries list | deliveries replay <id>');
    }
    case 'statement': {
      const query = { from: values.from, to: values.to, limit: 100 };
      const walk = client.paginate('/api/v1/wallet/transactions', { params: { query } });
      const items: (typeof walk extends AsyncGenerator<infer Item> ? Item : never)[] = [];
      for await (const item of walk) items.push(item);
      if (values.csv) {
        // The same CSV as `admin wallet statement --csv`.
        process.stdout.write(statementCsv(items));
        return 0;
      }
      print(json, items, () =>
        table(
          items.map(({ created_at, type, amount_minor, balance_after_minor, reference }) => ({
            created_at,
            type,
            amount_minor,
            balance_after_minor,
            reference,
          })),
        ),
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

const [major] = process.versions.node.split('.').map(Number);
if (major! < 24) {
  process.stderr.write(`the gateway CLI needs Node 24 (this is ${process.version}): run it with npm run gateway\n`);
  process.exit(2);
}
try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    const usage = !(error instanceof UsageError) || error.showUsage;
    process.stderr.write(`${(error as Error).message}\n${usage ? `\n${USAGE}` : ''}`);
    process.exitCode = 2;
  } else if (error instanceof GatewayClientError) {
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
