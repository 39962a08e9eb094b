// The operator CLI's own part: the record of what operators changed (admin_audit), and the command
// that lists it. The CLI's entry and the registry of every feature's commands are src/admin-cli/.
import type { Feature } from '../feature.ts';
import { AdminAudit, latestAudit } from './audit.ts';
import type { OperatorCommand } from './command.ts';
import { limit, limitFlag } from './flags.ts';

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

export const adminFeature: Feature = {
  name: 'admin',
  entities: [AdminAudit],
  commands: auditCommands,
};
