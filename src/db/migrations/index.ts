// Every migration, in order. Listed explicitly rather than discovered from disk, so the same
// list runs under `npm start`, the tests and a production deploy.
import { Migration0001Platform } from './0001-platform.ts';
import { Migration0002ProviderCallbacks } from './0002-provider-callbacks.ts';
import { Migration0003Transfers } from './0003-transfers.ts';
import { Migration0004Webhooks } from './0004-webhooks.ts';
import { Migration0005VirtualAccounts } from './0005-virtual-accounts.ts';
import { Migration0006Cards } from './0006-cards.ts';
import { Migration0007TransferDiscrepancies } from './0007-transfer-discrepancies.ts';
import { Migration0008FanoutClaims } from './0008-fanout-claims.ts';
import { Migration0009IdempotencyLeases } from './0009-idempotency-leases.ts';
import { Migration0010AbandonedReservations } from './0010-abandoned-reservations.ts';
import { Migration0011EventNotify } from './0011-event-notify.ts';
import { Migration0012AdminAudit } from './0012-admin-audit.ts';
import { Migration0013Reconciliation } from './0013-reconciliation.ts';
import { Migration0014EventTraceContext } from './0014-event-trace-context.ts';
import { Migration0015KeyExpiry } from './0015-key-expiry.ts';
import { Migration0016CardPolicies } from './0016-card-policies.ts';
import { Migration0017CardAuthorizations } from './0017-card-authorizations.ts';
import { Migration0018BvnVerification } from './0018-bvn-verification.ts';
import { Migration0019VirtualAccountBvns } from './0019-virtual-account-bvns.ts';
import { Migration0020Modes } from './0020-modes.ts';
import { Migration0021CardAuthorizationsPerCard } from './0021-card-authorizations-per-card.ts';
import { Migration0022WebhookAttemptSlots } from './0022-webhook-attempt-slots.ts';
import { Migration0023TransferConnectors } from './0023-transfer-connectors.ts';
import { Migration0024ReconciliationConnectors } from './0024-reconciliation-connectors.ts';
import { Migration0025TransferBatches } from './0025-transfer-batches.ts';
import { Migration0026WalletStatements } from './0026-wallet-statements.ts';
import { Migration0027EventStream } from './0027-event-stream.ts';
import { Migration0028EventStreamLeases } from './0028-event-stream-leases.ts';
import { Migration0029PossiblyTaken } from './0029-possibly-taken.ts';
import { Migration0030InboundCreditFees } from './0030-inbound-credit-fees.ts';
import { Migration0031BatchBounds } from './0031-batch-bounds.ts';
import { Migration0032Recipients } from './0032-recipients.ts';
import { Migration0033BatchItemSavedNames } from './0033-batch-item-saved-names.ts';
import { Migration0034TenantKeys } from './0034-tenant-keys.ts';
import { Migration0035Approvals } from './0035-approvals.ts';
import { Migration0036Console } from './0036-console.ts';
import { Migration0037TransferReversals } from './0037-transfer-reversals.ts';
import { Migration0038CreditReturns } from './0038-credit-returns.ts';
import { Migration0040RateLimitWindows } from './0040-rate-limit-windows.ts';
import { Migration0041BatchItemBankWords } from './0041-batch-item-bank-words.ts';
import { Migration0042BatchItemAwaitingRuns } from './0042-batch-item-awaiting-runs.ts';
import { Migration0043PostingsBalancedPerStatement } from './0043-postings-balanced-per-statement.ts';
import { Migration0044PostingsBalancedByInsertedRows } from './0044-postings-balanced-by-inserted-rows.ts';
import { Migration0045TransferAwaitingWord } from './0045-transfer-awaiting-word.ts';
import { Migration0039WebhookLifecycle } from './0039-webhook-lifecycle.ts';
import { Migration0046EventsNotifyWhenOwed } from './0046-events-notify-when-owed.ts';
import { Migration0047RowsWritten } from './0047-rows-written.ts';
import { Migration0048UnreadLedgerIndexes } from './0048-unread-ledger-indexes.ts';

export const migrations = [
  Migration0001Platform,
  Migration0002ProviderCallbacks,
  Migration0003Transfers,
  Migration0004Webhooks,
  Migration0005VirtualAccounts,
  Migration0006Cards,
  Migration0007TransferDiscrepancies,
  Migration0008FanoutClaims,
  Migration0009IdempotencyLeases,
  Migration0010AbandonedReservations,
  Migration0011EventNotify,
  Migration0012AdminAudit,
  Migration0013Reconciliation,
  Migration0014EventTraceContext,
  Migration0015KeyExpiry,
  Migration0016CardPolicies,
  Migration0017CardAuthorizations,
  Migration0018BvnVerification,
  Migration0019VirtualAccountBvns,
  Migration0020Modes,
  Migration0021CardAuthorizationsPerCard,
  Migration0022WebhookAttemptSlots,
  Migration0023TransferConnectors,
  Migration0024ReconciliationConnectors,
  Migration0025TransferBatches,
  Migration0026WalletStatements,
  Migration0027EventStream,
  Migration0028EventStreamLeases,
  Migration0029PossiblyTaken,
  Migration0030InboundCreditFees,
  Migration0031BatchBounds,
  Migration0032Recipients,
  Migration0033BatchItemSavedNames,
  Migration0034TenantKeys,
  Migration0035Approvals,
  Migration0036Console,
  Migration0037TransferReversals,
  Migration0038CreditReturns,
  Migration0040RateLimitWindows,
  Migration0041BatchItemBankWords,
  Migration0042BatchItemAwaitingRuns,
  Migration0043PostingsBalancedPerStatement,
  Migration0044PostingsBalancedByInsertedRows,
  Migration0045TransferAwaitingWord,
  Migration0039WebhookLifecycle,
  Migration0046EventsNotifyWhenOwed,
  Migration0047RowsWritten,
  Migration0048UnreadLedgerIndexes,
];
