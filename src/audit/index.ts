// The audit feature: the record of what operators changed (admin_audit, kept by src/admin/audit.ts,
// which the operator CLI writes), and the command that lists it. The CLI's entry and the registry of
// every feature's commands are src/admin-cli/; the helpers all commands share, src/admin/.
import type { Feature } from '../feature.ts';
import { AdminAudit, latestAudit } from '../admin/audit.ts';
import type { OperatorCommand } from '../admin/command.ts';
import { limit, limitFlag } from '../admin/flags.ts';

/** The CLI's own: the record of what operators changed. */
const auditCommands: OperatorCommand[] = [
  {
    name: 'audit list',
    description: 'The latest rows of admin_audit (commands that change something), newest first',
    flags: { limit: limitFlag(50) },
    async run(em, flags) {
      return { items: await latestAudit(em, flags.get('limit', limit)) };
    },
  },
];

export const auditFeature: Feature = {
  name: 'audit',
  entities: [AdminAudit],
  commands: auditCommands,
};
