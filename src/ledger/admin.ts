// Operator commands for the books: `ledger verify`.
import type { OperatorCommand } from '../admin/command.ts';
import { type LedgerReport, readThrough, verifyLedger } from './verify.ts';

export const ledgerCommands: OperatorCommand[] = [
  {
    name: 'ledger verify',
    description: 'Checks every invariant of the books (src/ledger/verify.ts); exits 1 on any breach',
    flags: {},
    run(em) {
      return verifyLedger(readThrough(em));
    },
    exitCodeOf(result) {
      return (result as LedgerReport).ok ? 0 : 1;
    },
  },
];
