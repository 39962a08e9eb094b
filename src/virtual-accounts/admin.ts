// Operator commands for virtual accounts: `virtual-account freeze` and `unfreeze`. Only operators
// freeze an account; the tenant may still close a frozen one.
import type { OperatorCommand } from '../admin/command.ts';
import { OperatorRefusal } from '../admin/errors.ts';
import { flag, uuid } from '../admin/flags.ts';
import { changeStatus, findAccount } from './store.ts';
import { virtualAccountView } from './views.ts';

function statusCommand(name: string, description: string, from: 'active' | 'frozen'): OperatorCommand {
  const to = from === 'active' ? 'frozen' : 'active';
  return {
    name,
    description,
    mutates: true,
    flags: { id: flag.required('ID', "the virtual account's id") },
    async run(em, flags) {
      const id = flags.get('id', uuid('a virtual account id'));
      const row = await changeStatus(em, id, { from: [from], to });
      if (row) return virtualAccountView(row);
      const current = await findAccount(em, id);
      if (!current) throw new OperatorRefusal('not_found', `no virtual account ${id}`);
      throw new OperatorRefusal('wrong_status', `virtual account ${id} is ${current.status}, not ${from}`);
    },
  };
}

export const virtualAccountCommands: OperatorCommand[] = [
  statusCommand('virtual-account freeze', 'active → frozen (the tenant may still close it)', 'active'),
  statusCommand('virtual-account unfreeze', 'frozen → active', 'frozen'),
];
