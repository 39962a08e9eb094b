// The operator commands: each declares its flags (for node:util parseArgs) and returns the JSON
// object the CLI prints.
import { randomUUID } from 'node:crypto';
import { isUuid } from '../http/ids.ts';
import type { ParseArgsConfig } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { journalOf, postMovement, walletBalance } from '../ledger/ledger.ts';
import { walletFunding } from '../ledger/movements.ts';
import { MAX_POSTING_MINOR } from '../ledger/money.ts';
import { type LedgerReport, readThrough, verifyLedger } from '../ledger/verify.ts';
import {
  createTenant,
  issueKey,
  listKeys,
  listTenants,
  revokeKey,
  rollKeys,
  tenantMode,
  MAX_ROLL_OVERLAP_MS,
  TenantError,
  updateTenant,
} from '../tenants/tenants.ts';
import { Tenant } from '../db/entities.ts';
import { virtualAccountView } from '../virtual-accounts/views.ts';
import {
  CardAuthorization,
  authorizationView,
  findAuthorizations,
  pendingHolds,
  settleAuthorization,
} from '../cards/authorizations.ts';
import { refusedLoadAlerts } from '../cards/store.ts';
import { changeStatus, findAccount } from '../virtual-accounts/store.ts';
import { listDiscrepancies, settleDiscrepancy } from '../transfers/discrepancies.ts';
import { findByReference, findTransfer } from '../transfers/store.ts';
import { replayDelivery } from '../webhooks/service.ts';
import { type RunSummary, findRun, latestRuns, runItems, runsOfWorkflow } from '../reconciliation/store.ts';
import {
  RECONCILIATION_WORKFLOW_TYPE,
  type ReconciliationInput,
  type ReconciliationResult,
  reconciliationWorkflowId,
} from '../../workflows/reconciliation-definitions.ts';
import { DELIVERY_STATUSES, type DeliveryStatus, deliveriesCreatedBetween, findEndpoint } from '../webhooks/store.ts';

const isDeliveryStatus = (value: string): value is DeliveryStatus =>
  (DELIVERY_STATUSES as readonly string[]).includes(value);
import { userInfo } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { TRANSFER_WORKFLOW_TYPE, resolveUpdate, transferWorkflowId } from '../../workflows/transfer-definitions.ts';
import {
  AmountMinorKey,
  TenantIdKey,
  TransferConnectorKey,
  TransferReferenceKey,
} from '../../workflows/search-attributes.ts';

async function withTemporal<T>(config: Config, work: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: config.temporalAddress, connectTimeout: 5_000 });
  try {
    return await work(new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }));
  } finally {
    await connection.close();
  }
}

/** Operators freeze an active account (no closure by the tenant is blocked) and unfreeze it. */
function freezeCommand(frozen: boolean): AdminCommand {
  return {
    mutates: true,
    options: { id: { type: 'string' } },
    async run(em, values) {
      const id = text(values, 'id', true);
      if (!isUuid(id)) throw new AdminUsageError(`--id must be a virtual account id (a UUID), got '${id}'`);
      const [from, to] = frozen ? (['active', 'frozen'] as const) : (['frozen', 'active'] as const);
      const row = await changeStatus(em, id, { from: [from], to });
      if (row) return virtualAccountView(row);
      const current = await findAccount(em, id);
      throw new TenantError(
        current ? `virtual account ${id} is ${current.status}, not ${from}` : `no virtual account ${id}`,
      );
    },
  };
}

/** `90s`, `15m`, `2h`, `1d` → milliseconds. */
export function durationMs(value: string, flag: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(value);
  if (!match) throw new AdminUsageError(`--${flag} must look like 90s, 15m, 2h or 1d, got '${value}'`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

export class AdminUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminUsageError';
  }
}

type Values = Record<string, unknown>;

export interface AdminCommand {
  options: NonNullable<ParseArgsConfig['options']>;
  run(em: EntityManager, values: Values, config: Config): Promise<object>;
  /** The exit code for a result that was printed (0 when absent): a check that found breaches says 1. */
  exitCodeOf?(result: object): number;
  /** Changes something: written to admin_audit with its operator, arguments and outcome. */
  mutates?: boolean;
}

/** Who runs a command: --operator where a command takes it, else GATEWAY_OPERATOR, else the OS user. */
export function operatorOf(values: Record<string, unknown>): string {
  const given = values.operator;
  return typeof given === 'string' && given.trim()
    ? given.trim()
    : (process.env.GATEWAY_OPERATOR ?? userInfo().username);
}

export const USAGE = `usage: npm run --silent admin -- <command> [flags]

  tenant create --name N [--wallet-minor N] [--daily-limit-minor N] [--feature F]... [--live]
  tenant update --tenant ID [--daily-limit-minor N] [--feature F]... [--no-feature F]...
  key create    --tenant ID [--live]   (the first live key opens the tenant's live mode, with its own wallet)
  key revoke    --key-prefix P
  key roll      --tenant ID [--expire-old-in 24h] [--live]   (a new key; the old ones work until then)
  wallet fund   --tenant ID --amount-minor N [--reference R] [--live]   (the test wallet, or with --live the live one)
  transfers stuck   [--older-than 15m] [--connector NAME]
  virtual-account freeze   --id ID
  virtual-account unfreeze --id ID
  transfers resolve --id TRANSFER_ID --outcome successful|failed --note TEXT
  transfers discrepancies [--all]
  transfers settle-discrepancy --id TRANSFER_ID --note TEXT [--operator NAME]
  transfers show    --id TRANSFER_ID | --tenant ID --reference R [--live]
  tenant list
  key list          --tenant ID
  webhooks replay   --endpoint ID --since T [--until T] [--status failed]
  audit list        [--limit 50]
  ledger verify     (every invariant of the books; exits 1 on any breach)
  reconcile run     --date YYYY-MM-DD [--connector NAME] [--wait 60s]   (each connector's record of that UTC day against our books)
  reconcile report  --date YYYY-MM-DD [--connector NAME] [--run ID] [--all]   (each connector's latest run of the day; --all lists matched items too)
  cards holds       [--older-than 7d]   (card authorizations still holding money, oldest first)
  cards release-hold --authorization ID [--card CARD_ID] --note TEXT [--operator NAME]   (as the processor's reversal would)
  cards alerts      [--limit 100]   (refused card loads whose money purchases had already spent, newest first)

Amounts are integer kobo (100 kobo = ₦1). Output is one JSON object on stdout. Test and live are
separate worlds: --tenant takes the tenant's id, and --live picks its live mode (live_tenant_id).`;

function text(values: Values, flag: string, required: true): string;
function text(values: Values, flag: string, required?: false): string | undefined;
function text(values: Values, flag: string, required = false): string | undefined {
  const value = values[flag];
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (required) throw new AdminUsageError(`--${flag} is required`);
  return undefined;
}

function kobo(values: Values, flag: string, { min }: { min: number }): number | undefined {
  const raw = text(values, flag);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new AdminUsageError(`--${flag} must be a whole number of kobo, got '${raw}'`);
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > MAX_POSTING_MINOR) {
    throw new AdminUsageError(`--${flag} must be between ${min} and ${MAX_POSTING_MINOR} kobo, got ${raw}`);
  }
  return value;
}

/** A listing's `--limit`: 1 to 1000, `fallback` when not given. */
function listLimit(values: Values, fallback: number): number {
  const raw = text(values, 'limit') ?? String(fallback);
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000) {
    throw new AdminUsageError(`--limit must be between 1 and 1000, got '${raw}'`);
  }
  return Number(raw);
}

function instant(values: Values, flag: string, required: true): Date;
function instant(values: Values, flag: string, required?: false): Date | undefined;
function instant(values: Values, flag: string, required = false): Date | undefined {
  const raw = required ? text(values, flag, true) : text(values, flag);
  if (raw === undefined) return undefined;
  const at = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime())) {
    throw new AdminUsageError(`--${flag} must be an ISO 8601 time such as 2026-11-23T08:00:00Z, got '${raw}'`);
  }
  return at;
}

/** `--connector`: a connector's name (as LIVE_CONNECTORS spells them, or `sandbox`), when given. */
function connectorName(values: Values): string | undefined {
  const connector = text(values, 'connector');
  if (connector !== undefined && !/^[a-z][a-z0-9_-]{0,39}$/.test(connector)) {
    throw new AdminUsageError(`--connector must be a connector name (e.g. generic), got '${connector.slice(0, 40)}'`);
  }
  return connector;
}

/** A UTC day, today or before. */
function day(values: Values): string {
  const raw = text(values, 'date', true);
  const at = new Date(`${raw}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== raw) {
    throw new AdminUsageError(`--date must be a day such as 2026-11-23, got '${raw}'`);
  }
  if (raw > new Date().toISOString().slice(0, 10)) {
    throw new AdminUsageError(`--date ${raw} is in the future: the bank has no statement for it yet`);
  }
  return raw;
}

function list(values: Values, flag: string): string[] {
  const value = values[flag];
  return Array.isArray(value) ? value.map(String) : [];
}

function tenantId(values: Values): string {
  const id = text(values, 'tenant', true);
  if (!isUuid(id)) throw new AdminUsageError(`--tenant must be a tenant id (a UUID), got '${id}'`);
  return id;
}

/**
 * The tenant's mode that --live picks (its test mode without it); the live one only if it exists.
 * A live mode's own id (as `cards holds` and `transfers show` print it) needs --live: without it the
 * command would quietly act on the tenant's test mode instead.
 */
async function modeOfTenant(em: EntityManager, values: Values) {
  const id = tenantId(values);
  const mode = values.live ? 'live' : 'test';
  const given = await em.findOne(Tenant, { id });
  if (!given) throw new TenantError(`no tenant ${id}`);
  if (given.mode === 'live' && mode === 'test') {
    throw new AdminUsageError(`${id} is the live mode of tenant ${given.ownerId}: add --live`);
  }
  const row = await tenantMode(em, id, mode);
  if (row) return row;
  throw new TenantError(
    `tenant ${id} has no live mode yet: issue it a live key first (key create --tenant ${id} --live)`,
  );
}

async function wallet(em: EntityManager, id: string) {
  const balance = await walletBalance(em, id);
  return {
    currency: balance.currency,
    available_minor: balance.availableMinor,
    pending_minor: balance.pendingMinor,
    updated_at: balance.updatedAt.toISOString(),
  };
}

/** Moves money from the platform's external funding account into a tenant wallet. */
async function fundWallet(em: EntityManager, id: string, amountMinor: number, reference: string) {
  return postMovement(em, id, walletFunding({ tenantId: id, reference, amountMinor }));
}

export const COMMANDS: Record<string, AdminCommand> = {
  'tenant create': {
    mutates: true,
    options: {
      name: { type: 'string' },
      'wallet-minor': { type: 'string' },
      'daily-limit-minor': { type: 'string' },
      feature: { type: 'string', multiple: true },
      live: { type: 'boolean' },
    },
    async run(em, values) {
      const name = text(values, 'name', true);
      if (name.length > 200) throw new AdminUsageError('--name must be at most 200 characters');
      const walletMinor = kobo(values, 'wallet-minor', { min: 0 });
      const dailyLimit = kobo(values, 'daily-limit-minor', { min: 0 });
      const { tenant, key } = await createTenant(em, {
        name,
        features: list(values, 'feature'),
        ...(dailyLimit !== undefined ? { dailyTransferLimitMinor: dailyLimit } : {}),
        mode: values.live ? 'live' : 'test',
      });
      // The wallet of the first key's mode (an audited funding, like wallet fund).
      if (walletMinor) await fundWallet(em, key.mode_tenant_id, walletMinor, 'initial');
      return {
        ...tenant,
        api_key: key.api_key,
        key_id: key.key_id,
        key_prefix: key.key_prefix,
        mode: key.mode,
        wallet: await wallet(em, key.mode_tenant_id),
      };
    },
  },
  'tenant update': {
    mutates: true,
    options: {
      tenant: { type: 'string' },
      'daily-limit-minor': { type: 'string' },
      feature: { type: 'string', multiple: true },
      'no-feature': { type: 'string', multiple: true },
    },
    async run(em, values) {
      const id = tenantId(values);
      const dailyLimit = kobo(values, 'daily-limit-minor', { min: 0 });
      const enable = list(values, 'feature');
      const disable = list(values, 'no-feature');
      if (dailyLimit === undefined && !enable.length && !disable.length) {
        throw new AdminUsageError('nothing to update: give --daily-limit-minor, --feature or --no-feature');
      }
      return updateTenant(em, id, {
        enable,
        disable,
        ...(dailyLimit !== undefined ? { dailyTransferLimitMinor: dailyLimit } : {}),
      });
    },
  },
  'key create': {
    mutates: true,
    options: { tenant: { type: 'string' }, live: { type: 'boolean' } },
    async run(em, values) {
      const id = tenantId(values);
      return issueKey(em, id, values.live ? 'live' : 'test');
    },
  },
  'key roll': {
    mutates: true,
    options: { tenant: { type: 'string' }, 'expire-old-in': { type: 'string' }, live: { type: 'boolean' } },
    async run(em, values) {
      const id = tenantId(values);
      const raw = text(values, 'expire-old-in') ?? '24h';
      const overlapMs = durationMs(raw, 'expire-old-in');
      if (overlapMs > MAX_ROLL_OVERLAP_MS)
        throw new AdminUsageError(`--expire-old-in must be at most 30d, got '${raw}'`);
      const rolled = await rollKeys(em, id, values.live ? 'live' : 'test', overlapMs);
      return { ...rolled.key, expiring: rolled.expiring };
    },
  },
  'key revoke': {
    mutates: true,
    options: { 'key-prefix': { type: 'string' } },
    async run(em, values) {
      return revokeKey(em, text(values, 'key-prefix', true));
    },
  },
  'wallet fund': {
    mutates: true,
    options: {
      tenant: { type: 'string' },
      'amount-minor': { type: 'string' },
      reference: { type: 'string' },
      live: { type: 'boolean' },
    },
    async run(em, values) {
      const amount = kobo(values, 'amount-minor', { min: 1 });
      if (amount === undefined) throw new AdminUsageError('--amount-minor is required');
      const mode = await modeOfTenant(em, values);
      const reference = text(values, 'reference') ?? `cli-${randomUUID()}`;
      const posted = await fundWallet(em, mode.id, amount, reference);
      return {
        tenant_id: mode.ownerId,
        mode: mode.mode,
        mode_tenant_id: mode.id,
        entry_id: posted.entryId,
        reference,
        amount_minor: amount,
        applied: posted.created,
        wallet: await wallet(em, mode.id),
      };
    },
  },
  'ledger verify': {
    options: {},
    run(em) {
      return verifyLedger(readThrough(em));
    },
    exitCodeOf(result) {
      return (result as LedgerReport).ok ? 0 : 1;
    },
  },
  'transfers stuck': {
    options: { 'older-than': { type: 'string' }, connector: { type: 'string' } },
    async run(em, values, config) {
      const olderThan = text(values, 'older-than') ?? '15m';
      const before = new Date(Date.now() - durationMs(olderThan, 'older-than'));
      // Goes into the visibility query as a literal: a name, nothing that could end the quote.
      const connector = connectorName(values);
      return withTemporal(config, async (client) => {
        const query =
          `WorkflowType = '${TRANSFER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' ` +
          `AND TransferStatus = 'processing' AND StartTime < '${before.toISOString()}'` +
          (connector ? ` AND TransferConnector = '${connector}'` : '');
        const transfers = [];
        for await (const execution of client.workflow.list({ query })) {
          const tenantId = execution.typedSearchAttributes.get(TenantIdKey);
          const reference = execution.typedSearchAttributes.get(TransferReferenceKey);
          const row = tenantId && reference ? await findByReference(em, tenantId, reference) : null;
          transfers.push({
            transfer_id: row?.id ?? null,
            workflow_id: execution.workflowId,
            tenant_id: tenantId ?? null,
            reference: reference ?? null,
            amount_minor: row ? row.amount_minor : (execution.typedSearchAttributes.get(AmountMinorKey) ?? null),
            session_id: row?.session_id ?? null,
            connector: row?.connector ?? execution.typedSearchAttributes.get(TransferConnectorKey) ?? null,
            started_at: execution.startTime.toISOString(),
            stuck_since: row?.stuck_since ? row.stuck_since.toISOString() : null,
          });
        }
        return {
          older_than: olderThan,
          started_before: before.toISOString(),
          count: transfers.length,
          transfers,
          query,
        };
      });
    },
  },
  'transfers resolve': {
    mutates: true,
    options: { id: { type: 'string' }, outcome: { type: 'string' }, note: { type: 'string' } },
    async run(em, values, config) {
      const id = text(values, 'id', true);
      const outcome = text(values, 'outcome', true);
      const note = text(values, 'note', true);
      if (outcome !== 'successful' && outcome !== 'failed') {
        throw new AdminUsageError(`--outcome must be successful or failed, got '${outcome}'`);
      }
      if (!isUuid(id)) throw new AdminUsageError(`--id must be a transfer id (a UUID), got '${id}'`);
      const row = await findTransfer(em, id);
      if (!row) throw new TenantError(`no transfer ${id}`);
      if (row.status === 'completed' || row.status === 'failed') {
        throw new TenantError(`transfer ${id} is already ${row.status}; nothing to resolve`);
      }
      const workflowId = transferWorkflowId(row.tenant_id, row.reference);
      const operator = operatorOf(values);
      // Answered by the workflow once the transfer is settled or reversed.
      const { status } = await withTemporal(config, (client) =>
        client.workflow.getHandle(workflowId).executeUpdate(resolveUpdate, { args: [{ outcome, note, operator }] }),
      );
      return { transfer_id: id, workflow_id: workflowId, outcome, note, operator, status };
    },
  },
  // Late bank answers that contradict the books (decisions §12): listed, then settled by an operator.
  'transfers discrepancies': {
    options: { all: { type: 'boolean' } },
    async run(em, values) {
      return { items: await listDiscrepancies(em, { all: values.all === true }) };
    },
  },
  'transfers settle-discrepancy': {
    mutates: true,
    options: { id: { type: 'string' }, note: { type: 'string' }, operator: { type: 'string' } },
    async run(em, values) {
      const id = text(values, 'id', true);
      const note = text(values, 'note', true);
      if (!isUuid(id)) throw new AdminUsageError(`--id must be a transfer id (a UUID), got '${id}'`);
      if (note.length > 1000) throw new AdminUsageError('--note must be at most 1000 characters');
      const operator = operatorOf(values);
      return settleDiscrepancy(em, { transferId: id, note, operator });
    },
  },
  'tenant list': {
    options: {},
    async run(em) {
      const tenants = await listTenants(em);
      return { count: tenants.length, tenants };
    },
  },
  'key list': {
    options: { tenant: { type: 'string' } },
    async run(em, values) {
      const id = tenantId(values);
      return { tenant_id: id, keys: await listKeys(em, id) };
    },
  },
  'transfers show': {
    options: {
      id: { type: 'string' },
      tenant: { type: 'string' },
      reference: { type: 'string' },
      live: { type: 'boolean' },
    },
    async run(em, values, config) {
      const id = text(values, 'id');
      const reference = text(values, 'reference');
      let row;
      if (id !== undefined) {
        if (!isUuid(id)) throw new AdminUsageError(`--id must be a transfer id (a UUID), got '${id}'`);
        row = await findTransfer(em, id);
      } else if (reference !== undefined) {
        row = await findByReference(em, (await modeOfTenant(em, values)).id, reference);
      } else {
        throw new AdminUsageError('give --id, or --tenant with --reference');
      }
      if (!row) throw new TenantError(`no such transfer`);
      const journal = await journalOf(em, `transfer:${row.id}:`);
      const workflowId = transferWorkflowId(row.tenant_id, row.reference);
      let workflow: object;
      try {
        workflow = await withTemporal(config, async (client) => {
          const described = await client.workflow.getHandle(workflowId).describe();
          return {
            status: described.status.name,
            run_id: described.runId,
            history_length: described.historyLength,
            started_at: described.startTime.toISOString(),
          };
        });
      } catch (error) {
        workflow = { status: 'unknown', error: error instanceof Error ? error.message : String(error) };
      }
      const ui = config.temporalUiUrl
        ? `${config.temporalUiUrl}/namespaces/${encodeURIComponent(config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(workflowId)}`
        : null;
      return {
        transfer: {
          ...row,
          created_at: row.created_at.toISOString(),
          updated_at: row.updated_at.toISOString(),
          completed_at: row.completed_at?.toISOString() ?? null,
          stuck_since: row.stuck_since?.toISOString() ?? null,
        },
        journal,
        workflow: { workflow_id: workflowId, ...workflow, history_url: ui },
      };
    },
  },
  'webhooks replay': {
    mutates: true,
    options: {
      endpoint: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      status: { type: 'string' },
    },
    async run(em, values, config) {
      const endpointId = text(values, 'endpoint', true);
      if (!isUuid(endpointId))
        throw new AdminUsageError(`--endpoint must be an endpoint id (a UUID), got '${endpointId}'`);
      const since = instant(values, 'since', true);
      const until = instant(values, 'until') ?? new Date();
      if (until <= since) throw new AdminUsageError('--until must be after --since');
      const status = text(values, 'status');
      if (status !== undefined && !isDeliveryStatus(status)) {
        throw new AdminUsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}, got '${status}'`);
      }
      const endpoint = await findEndpoint(em, endpointId);
      if (!endpoint) throw new TenantError(`no webhook endpoint ${endpointId}`);
      if (endpoint.status !== 'listening') {
        throw new TenantError(`endpoint ${endpointId} is ${endpoint.status}: nothing can be delivered to it`);
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
  'audit list': {
    options: { limit: { type: 'string' } },
    async run(em, values) {
      const limit = listLimit(values, 50);
      const rows = await em.execute<Record<string, unknown>[]>(
        'select id, operator, command, arguments, outcome, error, at from admin_audit order by at desc, id limit ?',
        [limit],
      );
      return { items: rows.map((row) => ({ ...row, at: new Date(row.at as Date).toISOString() })) };
    },
  },
  // Reconciliation of each connector's record of a day (src/reconciliation): it records, never moves money.
  'reconcile run': {
    mutates: true,
    options: { date: { type: 'string' }, connector: { type: 'string' }, wait: { type: 'string' } },
    async run(em, values, config) {
      const date = day(values);
      const connector = connectorName(values);
      const waitMs = durationMs(text(values, 'wait') ?? '60s', 'wait');
      const workflowId = reconciliationWorkflowId(date, randomUUID());
      const args: [ReconciliationInput] = [
        { date, trigger: 'operator', ...(connector ? { connectors: [connector] } : {}) },
      ];
      const finished = await withTemporal(config, async (client) => {
        const handle = await client.workflow.start(RECONCILIATION_WORKFLOW_TYPE, {
          workflowId,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          args,
        });
        // Bounded: the wait is cancelled (not left open) when the run takes longer.
        const signal = AbortSignal.timeout(waitMs);
        try {
          return await client.withAbortSignal(signal, () => handle.result() as Promise<ReconciliationResult>);
        } catch (error) {
          if (signal.aborted) return undefined;
          throw error;
        }
      });
      const withMismatches = (runs: RunSummary[]) =>
        Promise.all(runs.map(async (run) => ({ ...run, mismatches: await runItems(em, run.run_id, { all: false }) })));
      if (!finished) {
        // The connectors whose record was had are done and recorded; the others go on retrying.
        return {
          status: 'running',
          date,
          workflow_id: workflowId,
          runs: await withMismatches(await runsOfWorkflow(em, workflowId)),
          message: `not finished within ${waitMs / 1000} s (is a connector's statement unavailable?); the runs recorded so far are listed, read the others later with reconcile report --date ${date}`,
        };
      }
      return {
        status: 'completed',
        date,
        workflow_id: workflowId,
        runs: await withMismatches(finished.runs),
        unavailable: finished.unavailable,
      };
    },
    // A connector whose record could not be had (or that the worker does not have) is a run not done.
    exitCodeOf(result) {
      const unavailable = (result as { unavailable?: unknown[] }).unavailable;
      return unavailable && unavailable.length > 0 ? 1 : 0;
    },
  },
  'reconcile report': {
    options: {
      date: { type: 'string' },
      connector: { type: 'string' },
      run: { type: 'string' },
      all: { type: 'boolean' },
    },
    async run(em, values) {
      const date = day(values);
      const connector = connectorName(values);
      const runId = text(values, 'run');
      if (runId !== undefined && !isUuid(runId)) {
        throw new AdminUsageError(`--run must be a run id (a UUID), got '${runId}'`);
      }
      let runs: RunSummary[];
      if (runId) {
        const run = await findRun(em, runId);
        runs = run && run.date === date && (connector === undefined || run.connector === connector) ? [run] : [];
      } else {
        runs = await latestRuns(em, date, connector);
      }
      if (!runs.length) {
        const whose = connector ? ` of connector ${connector}` : '';
        throw new TenantError(
          runId
            ? `no reconciliation run ${runId}${whose} for ${date}`
            : `no reconciliation${whose} has run for ${date}`,
        );
      }
      const all = values.all === true;
      return {
        date,
        runs: await Promise.all(runs.map(async (run) => ({ ...run, items: await runItems(em, run.run_id, { all }) }))),
      };
    },
  },
  // Holds the processor never cleared nor reversed: found, then released as its reversal would.
  'cards holds': {
    options: { 'older-than': { type: 'string' } },
    async run(em, values) {
      const olderThan = text(values, 'older-than') ?? '7d';
      const items = await pendingHolds(em, durationMs(olderThan, 'older-than'));
      return {
        older_than: olderThan,
        count: items.length,
        held_minor: items.reduce((sum, item) => sum + item.amount_minor, 0),
        items: items.map((item) => ({ ...authorizationView(item), tenant_id: item.tenant_id })),
      };
    },
  },
  // Authorization ids are per card: an id on several cards needs --card (a usage error lists them).
  'cards release-hold': {
    mutates: true,
    options: {
      authorization: { type: 'string' },
      card: { type: 'string' },
      note: { type: 'string' },
      operator: { type: 'string' },
    },
    async run(em, values) {
      const id = text(values, 'authorization', true);
      const cardId = text(values, 'card');
      const note = text(values, 'note', true);
      if (note.length > 1000) throw new AdminUsageError('--note must be at most 1000 characters');
      if (cardId !== undefined && !isUuid(cardId)) {
        throw new AdminUsageError(`--card must be a card id (a UUID), got '${cardId}'`);
      }
      const rows = await findAuthorizations(em, cardId !== undefined ? { cardId } : {}, id, 100);
      const row = rows[0];
      if (!row) throw new TenantError(`no card authorization ${id}${cardId !== undefined ? ` on card ${cardId}` : ''}`);
      if (rows.length > 1) {
        throw new AdminUsageError(
          `card authorization ${id} is on ${rows.length} cards (${rows.map((one) => one.card_id).join(', ')}): name one with --card`,
        );
      }
      if (row.status !== 'pending') throw new TenantError(`card authorization ${id} is ${row.status}; nothing is held`);
      const result = await settleAuthorization(em.fork(), {
        kind: 'reverse',
        authorizationId: id,
        cardId: row.card_id,
      });
      if (!result.startsWith('reversed')) throw new TenantError(result);
      const released = await em.fork().findOneOrFail(CardAuthorization, { card_id: row.card_id, id });
      return {
        released_minor: row.amount_minor,
        operator: operatorOf(values),
        authorization: authorizationView(released),
      };
    },
  },
  // A card load the processor refused after purchases had spent its money (activities/cards.ts):
  // the funding failed, what the card still held went back to the wallet, the rest is listed here.
  'cards alerts': {
    options: { limit: { type: 'string' } },
    async run(em, values) {
      const limit = listLimit(values, 100);
      const { items, count, unrecoveredMinor } = await refusedLoadAlerts(em, limit);
      return { count, unrecovered_minor: unrecoveredMinor, items };
    },
  },
  'virtual-account freeze': freezeCommand(true),
  'virtual-account unfreeze': freezeCommand(false),
};
