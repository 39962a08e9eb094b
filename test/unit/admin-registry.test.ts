// The operator CLI's table of commands and its usage text, made from the features' declarations,
// and the one mapping of how a command ends to its exit code and audit outcome.
import { describe, expect, it } from 'vitest';
import { OperatorRefusal, UsageError, endingOf } from '../../src/admin/errors.ts';
import { COMMANDS, commandHelp, synopsis, usage } from '../../src/admin-cli/registry.ts';
import { TenantError } from '../../src/tenants/tenants.ts';
import { DiscrepancyError } from '../../src/transfers/discrepancies.ts';

describe('the operator commands', () => {
  it('are the commands operators have always typed, each with a description and help for every flag', () => {
    expect([...COMMANDS.keys()].sort()).toEqual(
      [
        'audit list',
        'cards alerts',
        'cards holds',
        'cards release-hold',
        'credits held',
        'credits release',
        'credits return',
        'key create',
        'key list',
        'key revoke',
        'key roll',
        'ledger verify',
        'reconcile report',
        'reconcile run',
        'tenant create',
        'tenant invite',
        'tenant list',
        'tenant update',
        'transfers discrepancies',
        'transfers resolve',
        'transfers settle-discrepancy',
        'transfers close-conflict',
        'transfers show',
        'transfers stuck',
        'virtual-account freeze',
        'virtual-account unfreeze',
        'wallet fund',
        'wallet statement',
        'webhooks replay',
      ].sort(),
    );
    for (const command of COMMANDS.values()) {
      expect(command.description, command.name).toMatch(/^\S.{10,}$/);
      for (const [name, spec] of Object.entries(command.flags))
        expect(spec.help, `${command.name} --${name}`).not.toBe('');
    }
  });

  it('write required flags bare, optional ones in brackets, repeated ones with ..., and say defaults', () => {
    expect(synopsis(COMMANDS.get('tenant create')!)).toBe(
      'tenant create --name N [--wallet-minor N] [--daily-limit-minor N] [--feature F]... [--live]',
    );
    expect(synopsis(COMMANDS.get('transfers resolve')!)).toBe(
      'transfers resolve --id TRANSFER_ID --outcome successful|failed --note TEXT [--wait D]',
    );
    expect(commandHelp(COMMANDS.get('key roll')!)).toContain(
      '--expire-old-in D  how long the old keys keep working: 0s to 30d (default 24h)',
    );
  });

  it('are all in the usage text, with every flag’s help, and what holds for all of them', () => {
    const text = usage({ detail: true });
    for (const command of COMMANDS.values()) {
      expect(text).toContain(`  ${synopsis(command)}\n      ${command.description}`);
      for (const spec of Object.values(command.flags)) expect(text).toContain(spec.help);
    }
    expect(text).toContain('Amounts are integer kobo (100 kobo = ₦1). Output is one JSON object on stdout');
    expect(text).toContain("--tenant takes the tenant's id, and --live picks its live mode\n(live_tenant_id)");
    expect(
      usage({ detail: false })
        .split('\n')
        .filter((line) => /^ {2}\S/.test(line)),
    ).toHaveLength(COMMANDS.size);
  });
});

describe('how a command ends', () => {
  it.each([
    [new UsageError('--note is required'), 2, 'refused', 'transfers resolve: --note is required'],
    [
      new OperatorRefusal('not_found', 'no transfer x'),
      1,
      'failed',
      'transfers resolve refused (not_found): no transfer x',
    ],
    [
      new TenantError('unknown_key', 'no active key'),
      1,
      'failed',
      'transfers resolve refused (unknown_key): no active key',
    ],
    [
      new DiscrepancyError('already_settled', 'settled before'),
      1,
      'failed',
      'transfers resolve refused (already_settled): settled before',
    ],
    [new Error('connection reset'), 1, 'failed', 'transfers resolve failed: connection reset'],
  ])('%o → exit %i, audited %s', (error, exitCode, outcome, line) => {
    expect(endingOf('transfers resolve', error)).toEqual({ exitCode, outcome, message: error.message, line });
  });
});
