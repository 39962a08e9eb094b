// The reversal workflow's side effects (decisions §21): the holder connector's status query, and the
// reversal applied once in PostgreSQL (src/transfers/reversals.ts). Its discrepancy, when the status
// query does not confirm the word, is the transfer activities' recordDiscrepancy.
import { log } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ProviderError } from '../../src/connectors/capabilities.ts';
import { type Providers, transfersConnector } from '../../src/connectors/registry.ts';
import { applyReversal } from '../../src/transfers/reversals.ts';
import { transferFailure } from '../../src/transfers/domain.ts';
import type { ReversalCheck, TransferReversalActivities } from '../../workflows/transfers/definitions.ts';

export interface TransferReversalActivityDeps {
  orm: MikroORM;
  providers: Providers;
}

export function createTransferReversalActivities({
  orm,
  providers,
}: TransferReversalActivityDeps): Omit<TransferReversalActivities, 'recordDiscrepancy'> {
  return {
    async reversalStatus(input: { transferId: string; connector: string }): Promise<ReversalCheck> {
      const found = transfersConnector(providers, input.connector);
      // A connector the deployment no longer has: a fault to retry, never a word of anyone else's.
      if (!found) throw new Error(`connector ${input.connector} holds this transfer but is not configured`);
      try {
        const result = await found.bankSwitch.transferStatus(input.transferId);
        return {
          status: result.status,
          ...(result.sessionId ? { sessionId: result.sessionId } : {}),
          ...(result.rawCode ? { providerCode: result.rawCode } : {}),
          ...(result.message ? { message: result.message } : {}),
        };
      } catch (error) {
        // "No such transfer", or a refusal to say: an answer, and not a confirmation.
        if (error instanceof ProviderError && !error.transient) {
          return {
            status: 'unknown',
            message: error.message,
            ...(error.rawCode ? { providerCode: error.rawCode } : {}),
          };
        }
        throw error;
      }
    },

    async applyReversal(input: { transferId: string; providerCode?: string }) {
      const result = await applyReversal(orm.em.fork(), input);
      if (result.outcome === 'unknown_transfer') {
        throw transferFailure('unknown_transfer', `no transfer ${input.transferId}`);
      }
      if (result.outcome === 'applied') {
        log.info('bank reversal applied: amount and fee back in the wallet', {
          transferId: input.transferId,
          entryId: result.entryId,
          settledDiscrepancyId: result.settledDiscrepancyId,
        });
        return { outcome: 'applied', reversedAt: result.reversedAt.toISOString() };
      }
      return { outcome: result.outcome };
    },
  };
}
