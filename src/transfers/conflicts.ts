// Connector conflicts (decisions §17): an answer about a transfer from a connector that does not
// hold it — the one it failed over from paying it after all, or any other connector naming it. The
// books follow the holder alone, so such an answer is never applied; it may mean the transfer was
// paid twice, at the platform's cost, and is kept for operators with both connectors named
// (`admin transfers discrepancies`, `admin transfers stuck`, gateway_connector_conflicts_total)
// until one closes it with a note saying what was done. Its rows are the transfers store's.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Refusal } from '../lib/refusal.ts';
import type { BankOutcome } from '../../workflows/transfers/definitions.ts';
import {
  type ConnectorConflictRow,
  closeConnectorConflict as closeRow,
  connectorConflicts,
  connectorOf,
  findConnectorConflict,
  findTransfer,
  insertConnectorConflict,
} from './store.ts';

/** Who noticed the conflict: the callback route, or a transfer's run given a foreign word. */
export type ConflictDetectedBy = 'callback' | 'workflow';

export interface ConnectorConflictView {
  id: string;
  kind: 'connector_conflict';
  transfer_id: string;
  tenant_id: string;
  reference: string;
  /** The connector that holds the transfer: the books follow it. */
  holder: string;
  /** The connector that answered about the transfer without holding it. */
  connector: string;
  said: 'successful' | 'failed';
  /** The transfer's status in the books when the answer came. */
  transfer_status: string;
  amount_minor: number;
  fee_minor: number;
  detail: Record<string, unknown>;
  received_at: string;
  closed_at: string | null;
  closed_by: string | null;
  close_note: string | null;
}

function view(row: ConnectorConflictRow, transfer: { amount_minor: string | number; fee_minor: string | number }) {
  return {
    id: row.id,
    kind: 'connector_conflict',
    transfer_id: row.transfer_id,
    tenant_id: row.tenant_id,
    reference: row.reference,
    holder: row.holder,
    connector: row.connector,
    said: row.said,
    transfer_status: row.transfer_status,
    amount_minor: Number(transfer.amount_minor),
    fee_minor: Number(transfer.fee_minor),
    detail: row.detail,
    received_at: new Date(row.received_at).toISOString(),
    closed_at: row.closed_at ? new Date(row.closed_at).toISOString() : null,
    closed_by: row.closed_by,
    close_note: row.close_note,
  } satisfies ConnectorConflictView;
}

/**
 * Keeps an answer about a transfer from `bank.connector` when another connector holds it, judged
 * under the transfer's row lock (a failover racing the answer is weighed as it ends up). Undefined
 * when the answering connector is the holder (no conflict); otherwise the open conflict, and
 * whether this call recorded it (a repeat of the answer finds the same one).
 */
export async function recordConnectorConflict(
  em: EntityManager,
  input: {
    transferId: string;
    bank: BankOutcome & { connector: string };
    detectedBy: ConflictDetectedBy;
    eventId?: string;
  },
): Promise<{ created: boolean; conflict: ConnectorConflictView } | undefined> {
  return em.transactional(async (tx) => {
    const transfer = await findTransfer(tx, input.transferId, { lock: true });
    if (!transfer || connectorOf(transfer) === input.bank.connector) return undefined;
    const kept = await insertConnectorConflict(tx, transfer, {
      connector: input.bank.connector,
      said: input.bank.status,
      detail: {
        source: input.bank.source,
        detected_by: input.detectedBy,
        session_id: input.bank.sessionId ?? null,
        provider_code: input.bank.providerCode ?? null,
        message: input.bank.message ?? null,
        ...(input.eventId ? { event_id: input.eventId } : {}),
      },
    });
    return { created: kept.created, conflict: view(kept.conflict, transfer) };
  });
}

/** Open connector conflicts (or all, closed too), oldest first. */
export async function listConnectorConflicts(
  em: EntityManager,
  options: { all: boolean },
): Promise<ConnectorConflictView[]> {
  return (await connectorConflicts(em, options)).map((row) => view(row, row));
}

export type ConflictErrorCode = 'no_conflict' | 'already_closed';

/** Closing is an operator's act (`transfers close-conflict`): its refusals are operator refusals. */
export class ConflictError extends Refusal<ConflictErrorCode> {
  override readonly name = 'ConflictError';
}

/**
 * Closes an open conflict with what the operator did about it (recovered the second payment, or
 * found it was never made); moves no money: the tenant's books follow the holder throughout.
 */
export async function closeConnectorConflict(
  em: EntityManager,
  input: { id: string; note: string; operator: string },
): Promise<ConnectorConflictView> {
  return em.transactional(async (tx) => {
    const closed = await closeRow(tx, input.id, { operator: input.operator, note: input.note });
    if (closed) {
      const transfer = await findTransfer(tx, closed.transfer_id);
      return view(closed, transfer!);
    }
    const existing = await findConnectorConflict(tx, input.id);
    if (!existing) throw new ConflictError('no_conflict', `no connector conflict ${input.id}`);
    throw new ConflictError(
      'already_closed',
      `connector conflict ${input.id} was already closed at ${new Date(existing.closed_at!).toISOString()} by ${existing.closed_by}`,
    );
  });
}
