// What a log line may show of an account number (decisions §16): its last 4 digits, in URLs and
// in error messages, whatever the spelling; ids that only look numeric keep their shape.
import { LogTimestamp, type LogEntry, DefaultLogger } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { maskAccountNumbers, maskUrl, maskedErrorSerializer, maskingLogger } from '../../src/runtime/log-masking.ts';

describe('maskUrl', () => {
  it.each([
    [
      '/api/v1/banks/resolve?bank_code=058&account_number=0123456789',
      '/api/v1/banks/resolve?bank_code=058&account_number=******6789',
    ],
    // Percent-encoding does not hide it (%30 is "0").
    [
      '/api/v1/banks/resolve?account_number=%30123456789&bank_code=058',
      '/api/v1/banks/resolve?account_number=******6789&bank_code=058',
    ],
    // An account parameter is masked whatever its shape; a bare run of 10 to 19 digits anywhere.
    ['/api/v1/x?recipient_account=01234-56789', '/api/v1/x?recipient_account=*******6789'],
    ['/api/v1/x?accountNumber=0123456789', '/api/v1/x?accountNumber=******6789'],
    ['/api/v1/transfers?reference=pay-0123456789', '/api/v1/transfers?reference=pay-******6789'],
    ['/api/v1/x?q=22222222222', '/api/v1/x?q=*******2222'],
    ['/api/v1/x?card=4111111111111111', '/api/v1/x?card=************1111'],
    [
      '/control/providers/wema/virtual-accounts/8100000011/credits',
      '/control/providers/wema/virtual-accounts/******0011/credits',
    ],
    // A key or a webhook secret in a query string keeps its prefix only.
    ['/api/v1/wallet?api_key=sk_live_abcdefghijklmnop', '/api/v1/wallet?api_key=sk_live_***'],
    ['/x?s=whsec_c2VjcmV0LXNlY3JldA==', '/x?s=whsec_***'],
  ])('%s → %s', (url, masked) => {
    expect(maskUrl(url)).toBe(masked);
  });

  it.each([
    '/api/v1/transfers/550e8400-e29b-41d4-a716-446655440000',
    '/api/v1/transfers/00000000-0000-4000-8000-000000000000',
    '/api/v1/transfers?page=2&limit=100&from=2026-11-25T10:00:00Z',
    // NIP session ids are 30 digits: identifiers, kept whole.
    '/api/v1/x?session_id=123456789012345678901234567890',
    '/api/v1/x?q=abc1234567890',
  ])('leaves %s as it is', (url) => {
    expect(maskUrl(url)).toBe(url);
  });
});

describe('maskAccountNumbers', () => {
  it('masks a number in a message, keeps the rest', () => {
    expect(maskAccountNumbers('recipient account 0123456789 was not found at bank 058')).toBe(
      'recipient account ******6789 was not found at bank 058',
    );
  });

  it('masks inside an error serialized for pino: message, stack and cause', () => {
    const error = new Error('no account 0123456789 at GTBank', { cause: new Error('bank said 9876543210') });
    const serialized = JSON.stringify(maskedErrorSerializer(error));
    expect(serialized).not.toMatch(/0123456789|9876543210/);
    expect(serialized).toContain('no account ******6789 at GTBank');
    expect(serialized).toContain('******3210');
  });
});

describe('maskingLogger', () => {
  it("masks the SDK's message and metadata, errors included, and keeps its timestamp", () => {
    const entries: LogEntry[] = [];
    const logger = maskingLogger(new DefaultLogger('TRACE', (entry) => entries.push(entry)));
    logger.warn('Activity failed for 0123456789', {
      error: new Error('recipient account 0123456789 was not found'),
      attempt: 3,
      [LogTimestamp]: 42n,
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.timestampNanos).toBe(42n);
    expect(entries[0]!.message).toBe('Activity failed for ******6789');
    expect(JSON.stringify(entries[0]!.meta)).not.toContain('0123456789');
    expect(entries[0]!.meta).toMatchObject({
      attempt: 3,
      error: { message: 'recipient account ******6789 was not found' },
    });
  });

  it("drops a line below the inner logger's level without reading its metadata, and passes one at it", () => {
    const entries: LogEntry[] = [];
    const logger = maskingLogger(new DefaultLogger('INFO', (entry) => entries.push(entry)));
    const unread = {
      get error(): never {
        throw new Error('a dropped line was masked');
      },
    };
    logger.debug('Activity started', unread);
    logger.trace('Workflow started', unread);
    logger.info('Worker state changed 0123456789', { state: 'RUNNING' });
    expect(entries.map((entry) => [entry.level, entry.message])).toEqual([['INFO', 'Worker state changed ******6789']]);
  });
});
