// A saved recipient as the API shows it.
import type { RecipientView } from './schemas.ts';
import type { RecipientRow } from './store.ts';

/** `lastPaid`: when a transfer to the account last completed (src/recipients/store.ts, lastPaidAt). */
export function recipientView(row: RecipientRow, lastPaid: Date | undefined): RecipientView {
  return {
    id: row.id,
    bank_code: row.bank_code,
    bank_name: row.bank_name,
    account_number: row.account_number,
    account_name: row.account_name,
    label: row.label ?? null,
    metadata: row.metadata ?? null,
    created_at: row.created_at.toISOString(),
    last_paid_at: lastPaid ? lastPaid.toISOString() : null,
  };
}
