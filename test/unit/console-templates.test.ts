// The console's templates print every value escaped and carry no script or inline style (the CSP
// allows neither); amounts are shown exactly; sign-in sends nobody to another site.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { naira } from '../../src/console/render.ts';
import { safeNext } from '../../src/console/sign-in.ts';

const views = fileURLToPath(new URL('../../src/console/views', import.meta.url));
const templates = readdirSync(views).filter((name) => name.endsWith('.eta'));

describe('console templates', () => {
  it('there are templates to check', () => {
    expect(templates.length).toBeGreaterThan(2);
  });

  it.each(templates)('%s has no script, no event handler attribute and no inline style', (name) => {
    const source = readFileSync(join(views, name), 'utf8');
    expect(source).not.toMatch(/<script/i);
    expect(source).not.toMatch(/ on[a-z]+=/i);
    expect(source).not.toMatch(/style=/i);
  });

  it.each(templates.filter((name) => name !== 'layout.eta' && name !== 'bare.eta'))(
    '%s prints nothing raw (no <%%~)',
    (name) => {
      expect(readFileSync(join(views, name), 'utf8')).not.toContain('<%~');
    },
  );
});

describe('naira', () => {
  it.each([
    [0, '₦0.00'],
    [1, '₦0.01'],
    [100, '₦1.00'],
    [150_000, '₦1,500.00'],
    [-150_050, '−₦1,500.50'],
    [9007199254740993n, '₦90,071,992,547,409.93'],
    ['123456789012345678901', '₦1,234,567,890,123,456,789.01'],
  ] as const)('%s kobo is %s', (minor, shown) => {
    expect(naira(minor)).toBe(shown);
  });
});

describe('safeNext', () => {
  it.each(['//evil.com', '/\\evil', 'https://evil', '/dashboard//evil', 'https://evil/dashboard', '/dashboard\\evil'])(
    'refuses %s',
    (next) => {
      expect(safeNext(next)).toBe('/dashboard');
    },
  );

  it('keeps a console path with its query', () => {
    expect(safeNext('/dashboard/transfers?status=failed')).toBe('/dashboard/transfers?status=failed');
  });
});
