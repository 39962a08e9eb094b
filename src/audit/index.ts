// The audit feature: the record of what operators changed (admin_audit, kept by src/admin/audit.ts,
// which the operator CLI writes), and each tenant mode's own audit log (audit_log, kept by ./log.ts:
// keys made, rolled and revoked, transfer policy changes, approval decisions; decisions §19), with
// its routes and the command that lists either. The CLI's entry and the registry of every feature's
// commands are src/admin-cli/; the helpers all commands share, src/admin/.
import type { Feature } from '../feature.ts';
import { AdminAudit, latestAudit } from '../admin/audit.ts';
import type { OperatorCommand } from '../admin/command.ts';
import { flag, limit, limitFlag } from '../admin/flags.ts';
import { tenantModeOf } from '../tenants/admin.ts';
import { AuditLogEntry, auditEntryView, listAuditEntries } from './log.ts';
import { auditLogRoutes } from './routes.ts';

const auditCommands: OperatorCommand[] = [
  {
    name: 'audit list',
    description:
      "The latest rows of admin_audit (commands that change something), newest first; with --tenant, that tenant mode's audit log instead",
    flags: {
      limit: limitFlag(50),
      tenant: flag.optional('ID', "a tenant's id: list its audit log (API keys, transfer policy, approvals)"),
      live: flag.boolean("with --tenant: the tenant's live mode's audit log (else its test mode's)"),
    },
    async run(em, flags) {
      const count = flags.get('limit', limit);
      if (flags.optional('tenant') === undefined) return { items: await latestAudit(em, count) };
      const mode = await tenantModeOf(em, flags);
      const page = await listAuditEntries(em, mode.id, {}, { limit: count, offset: 0 });
      return { items: page.rows.map(auditEntryView) };
    },
  },
];

export const auditFeature: Feature = {
  name: 'audit',
  entities: [AdminAudit, AuditLogEntry],
  commands: auditCommands,
  api(app, { orm }) {
    auditLogRoutes(app, { orm });
  },
};
