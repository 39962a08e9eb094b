// The ledger: its operator commands (its journal is written through src/ledger/ledger.ts by the
// features that move money).
import type { Feature } from '../feature.ts';
import { ledgerCommands } from './admin.ts';

export const ledgerFeature: Feature = {
  name: 'ledger',
  commands: ledgerCommands,
};
