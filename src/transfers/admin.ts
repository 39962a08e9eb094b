// Operator commands for transfers: the stuck ones (found through Temporal visibility, resolved by
// an operator), late bank answers that contradict the books (decisions §12: listed, then settled),
// answers from a connector that does not hold the transfer (decisions §17: listed, then closed),
// and one transfer shown whole.
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { type OperatorCommand, withTemporal } from '../admin/command.ts';
import { OperatorRefusal, UsageError } from '../admin/errors.ts';
import { CONNECTOR, NOTE, OPERATOR, atMost, connectorName, duration, flag, oneOf, uuid } from '../admin/flags.ts';
import { journalOf } from '../ledger/ledger.ts';
import { tenantModeOf } from '../tenants/admin.ts';
import {
  AmountMinorKey,
  TenantIdKey,
  TransferConnectorKey,
  TransferStatusKey,
  TransferReferenceKey,
} from '../../workflows/search-attributes.ts';
import {
  TRANSFER_BATCH_CHUNK_WORKFLOW_TYPE,
  TRANSFER_WORKFLOW_TYPE,
  resolveItemUpdate,
  resolveUpdate,
  transferWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import { batchItemOf, processingItemsAwaitedBy } from './batch-store.ts';
import { listDiscrepancies, settleDiscrepancy } from './discrepancies.ts';
import { closeConnectorConflict, listConnectorConflicts } from './conflicts.ts';
import { isFinal } from './domain.ts';
import { connectorOf, findByReference, findTransfer } from './store.ts';

const transferId = uuid('a transfer id');
const TRANSFER = flag.required('TRANSFER_ID', "the transfer's id");

export const transferCommands: OperatorCommand[] = [
  {
    name: 'transfers stuck',
    description: 'Transfers still processing that started before the threshold, from Temporal visibility',
    flags: {
      'older-than': flag.optional('D', 'started at least this long ago: 90s, 15m, 2h or 1d', '15m'),
      connector: CONNECTOR,
    },
    async run(em, flags, config) {
      const before = new Date(Date.now() - flags.get('older-than', duration));
      // Goes into the visibility query as a literal: a name, nothing that could end the quote.
      const connector = flags.optional('connector', connectorName);
      return withTemporal(config, async (client) => {
        // Runs of the lean shape carry no status or connector attribute (docs/workflows.md#the-lean-shape):
        // the running runs that started before the threshold are asked, and the read model says
        // which of them are processing (not held for approval) and at which connector.
        // A batch's items awaited by their group's run (decisions §14) are that run's processing items.
        const query =
          `WorkflowType IN ('${TRANSFER_WORKFLOW_TYPE}', '${TRANSFER_BATCH_CHUNK_WORKFLOW_TYPE}') ` +
          `AND ExecutionStatus = 'Running' AND StartTime < '${before.toISOString()}'`;
        const transfers = [];
        for await (const execution of client.workflow.list({ query })) {
          const tenantId = execution.typedSearchAttributes.get(TenantIdKey);
          const reference = execution.typedSearchAttributes.get(TransferReferenceKey);
          const batchId = execution.memo?.['batchId'];
          const rows =
            execution.type === TRANSFER_BATCH_CHUNK_WORKFLOW_TYPE
              ? typeof batchId === 'string'
                ? await processingItemsAwaitedBy(em, batchId, execution.workflowId)
                : []
              : [tenantId && reference ? await findByReference(em, tenantId, reference) : null];
          for (const row of rows) {
            const status = row?.status ?? execution.typedSearchAttributes.get(TransferStatusKey);
            const at = row ? connectorOf(row) : execution.typedSearchAttributes.get(TransferConnectorKey);
            if (status !== 'processing' || (connector && at !== connector)) continue;
            transfers.push({
              transfer_id: row?.id ?? null,
              workflow_id: execution.workflowId,
              tenant_id: row?.tenant_id ?? tenantId ?? null,
              reference: row?.reference ?? reference ?? null,
              amount_minor: row ? row.amount_minor : (execution.typedSearchAttributes.get(AmountMinorKey) ?? null),
              session_id: row?.session_id ?? null,
              connector: at ?? null,
              started_at: execution.startTime.toISOString(),
              stuck_since: row?.stuck_since ? row.stuck_since.toISOString() : null,
              // Possibly taken by its connector (decisions §17): only that connector's status query decides.
              possibly_taken_at: row?.possibly_taken_at ? row.possibly_taken_at.toISOString() : null,
            });
          }
        }
        // Answers from a connector that does not hold the transfer: whatever its status, a payment
        // that may have been made twice needs an operator as much as a stuck one.
        const conflicts = (await listConnectorConflicts(em, { all: false })).filter(
          (conflict) => !connector || conflict.holder === connector || conflict.connector === connector,
        );
        return {
          older_than: flags.get('older-than'),
          started_before: before.toISOString(),
          count: transfers.length,
          transfers,
          connector_conflicts: conflicts,
          query,
        };
      });
    },
  },
  {
    name: 'transfers resolve',
    description: 'Settles or reverses a transfer its bank has not confirmed, through its workflow',
    mutates: true,
    flags: {
      id: TRANSFER,
      outcome: flag.required(
        'successful|failed',
        "what happened at the bank (the bank's own answer wins if it came first)",
      ),
      note: flag.required('TEXT', "why, kept with the transfer's resolution"),
      wait: flag.optional('D', "how long to wait for the workflow's answer: 90s, 15m, 2h or 1d", '60s'),
    },
    async run(em, flags, config) {
      const id = flags.get('id', transferId);
      const outcome = flags.get('outcome', oneOf(['successful', 'failed']));
      const note = flags.get('note');
      const waitMs = flags.get('wait', duration);
      const row = await findTransfer(em, id);
      if (!row) throw new OperatorRefusal('not_found', `no transfer ${id}`);
      if (isFinal(row.status)) {
        throw new OperatorRefusal('already_final', `transfer ${id} is already ${row.status}; nothing to resolve`);
      }
      // A batch's item its group's run awaits (the row names it) is resolved there (decisions §14).
      const awaitedBy = (await batchItemOf(em, id))?.awaitedBy ?? null;
      const workflowId = awaitedBy ?? transferWorkflowId(row.tenant_id, row.reference);
      const operator = flags.operator();
      // Answered by the workflow once the transfer is settled or reversed: on the operator's word,
      // or on the bank's when its answer came first.
      // A worker must run the update: without one, the wait ends and the operator is told, rather
      // than the command hanging until Ctrl-C.
      const waited = AbortSignal.timeout(waitMs);
      const { status, decidedBy, resolution } = await withTemporal(config, (client) =>
        client.withAbortSignal(waited, () =>
          awaitedBy
            ? client.workflow
                .getHandle(awaitedBy)
                .executeUpdate(resolveItemUpdate, { args: [{ transferId: id, outcome, note, operator }] })
            : client.workflow
                .getHandle(workflowId)
                .executeUpdate(resolveUpdate, { args: [{ outcome, note, operator }] }),
        ),
      ).catch((error: unknown) => {
        const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
        if (cause instanceof ApplicationFailure && cause.type === 'not_created') {
          throw new OperatorRefusal('no_transfer_yet', cause.message, { cause: error });
        }
        if (cause instanceof ApplicationFailure && cause.type === 'already_resolved') {
          throw new OperatorRefusal('already_resolved', cause.message, { cause: error });
        }
        if (waited.aborted) {
          throw new OperatorRefusal(
            'no_answer',
            `the workflow ${workflowId} did not answer within ${flags.optional('wait')}: is a worker running? ` +
              'The resolution may still be applied once one runs; check with transfers show',
            { cause: error },
          );
        }
        throw error;
      });
      // The resolution the transfer holds: this one, or an earlier one of the same outcome.
      return { transfer_id: id, workflow_id: workflowId, ...resolution, status, decided_by: decidedBy };
    },
  },
  {
    name: 'transfers discrepancies',
    description:
      'Late bank answers that contradict the books (decisions §12) and answers from a connector that does not ' +
      'hold the transfer (connector conflicts, decisions §17), still open, oldest first',
    flags: { all: flag.boolean('settled and closed ones too') },
    async run(em, flags) {
      const all = flags.on('all');
      return {
        items: await listDiscrepancies(em, { all }),
        connector_conflicts: await listConnectorConflicts(em, { all }),
      };
    },
  },
  {
    name: 'transfers close-conflict',
    description:
      'Closes a connector conflict with what was done about it (the second payment recovered, or found never ' +
      'made); moves no money: the books follow the connector that holds the transfer',
    mutates: true,
    flags: {
      id: flag.required('CONFLICT_ID', "the conflict's id (transfers discrepancies)"),
      note: NOTE,
      operator: OPERATOR,
    },
    async run(em, flags) {
      const id = flags.get('id', uuid('a connector conflict id'));
      const note = flags.get('note', atMost(1000));
      return closeConnectorConflict(em, { id, note, operator: flags.operator() });
    },
  },
  {
    name: 'transfers settle-discrepancy',
    description: "Aligns the books with the bank's late answer (a correcting journal entry), once",
    mutates: true,
    flags: { id: TRANSFER, note: NOTE, operator: OPERATOR },
    async run(em, flags) {
      const id = flags.get('id', transferId);
      const note = flags.get('note', atMost(1000));
      return settleDiscrepancy(em, { transferId: id, note, operator: flags.operator() });
    },
  },
  {
    name: 'transfers show',
    description: 'One transfer, by --id or by --tenant with --reference: its row, its journal entries and its workflow',
    flags: {
      id: flag.optional('TRANSFER_ID', "the transfer's id"),
      tenant: flag.optional('ID', "the tenant's id, with --reference"),
      reference: flag.optional('R', "the tenant's reference for it"),
      live: flag.boolean("a transfer of the tenant's live mode"),
    },
    async run(em, flags, config) {
      const id = flags.optional('id', transferId);
      const reference = flags.optional('reference');
      let row;
      if (id !== undefined) {
        row = await findTransfer(em, id);
      } else if (reference !== undefined) {
        row = await findByReference(em, (await tenantModeOf(em, flags)).id, reference);
      } else {
        throw new UsageError('give --id, or --tenant with --reference');
      }
      if (!row) throw new OperatorRefusal('not_found', 'no such transfer');
      const journal = await journalOf(em, `transfer:${row.id}:`);
      const workflowId = (await batchItemOf(em, row.id))?.awaitedBy ?? transferWorkflowId(row.tenant_id, row.reference);
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
];
