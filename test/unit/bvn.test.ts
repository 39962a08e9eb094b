// How a BVN is kept and matched (src/identity/bvn.ts): a keyed fingerprint that a database dump
// alone cannot reverse, a sealed copy bound to its verification, and the name rule of §11.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bvnHash, bvnKeysFrom, bvnLast4, bvnOutcome, openBvn, sealBvn } from '../../src/identity/bvn.ts';

const keys = bvnKeysFrom(Buffer.alloc(32, 1));
const otherKeys = bvnKeysFrom(Buffer.alloc(32, 2));

describe('BVN fingerprint', () => {
  it('is the same for the same BVN under the same key, and differs under another key or for another BVN', () => {
    expect(bvnHash(keys, '12345678901')).toBe(bvnHash(keys, '12345678901'));
    expect(bvnHash(keys, '12345678901')).toMatch(/^[0-9a-f]{64}$/);
    expect(bvnHash(otherKeys, '12345678901')).not.toBe(bvnHash(keys, '12345678901'));
    expect(bvnHash(keys, '12345678902')).not.toBe(bvnHash(keys, '12345678901'));
  });

  it('is not a digest anyone can recompute without the key', () => {
    const plain = createHash('sha256').update('12345678901').digest('hex');
    expect(bvnHash(keys, '12345678901')).not.toBe(plain);
  });

  it('derives separate keys for fingerprints and for sealing', () => {
    expect(keys.hashKey.equals(keys.encryptionKey)).toBe(false);
    expect(keys.hashKey).toHaveLength(32);
    expect(keys.encryptionKey).toHaveLength(32);
  });

  it('keeps the last 4 digits', () => {
    expect(bvnLast4('12345678901')).toBe('8901');
  });
});

describe('sealed BVN', () => {
  it('opens to the BVN for its own verification, and holds no digit of it in the clear', () => {
    const sealed = sealBvn(keys, 'verification-1', '12345678901');
    expect(sealed).not.toContain('12345678901');
    expect(sealed).not.toBe(sealBvn(keys, 'verification-1', '12345678901'));
    expect(openBvn(keys, 'verification-1', sealed)).toBe('12345678901');
  });

  it('does not open for another verification, under another key, or tampered with', () => {
    const sealed = sealBvn(keys, 'verification-1', '12345678901');
    expect(() => openBvn(keys, 'verification-2', sealed)).toThrow();
    expect(() => openBvn(otherKeys, 'verification-1', sealed)).toThrow();
    const [version, iv, tag, ciphertext] = sealed.split('.');
    const flipped = Buffer.from(ciphertext!, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => openBvn(keys, 'verification-1', [version, iv, tag, flipped.toString('base64')].join('.'))).toThrow();
    expect(() => openBvn(keys, 'verification-1', 'v2.x.y.z')).toThrow('unreadable sealed BVN');
  });
});

describe('BVN outcome', () => {
  const customer = { firstName: 'Ada', lastName: 'Obi' };
  it.each([
    ['no holder', null, 'bvn_not_found'],
    ['the same names', { firstName: 'Ada', lastName: 'Obi' }, 'verified'],
    ['the names upper-case, as BVN records keep them', { firstName: 'ADA', lastName: 'OBI' }, 'verified'],
    ['spaces around and inside', { firstName: '  Ada ', lastName: ' Obi' }, 'verified'],
    ['another first name', { firstName: 'Adaeze', lastName: 'Obi' }, 'name_mismatch'],
    ['another last name', { firstName: 'Ada', lastName: 'Obiora' }, 'name_mismatch'],
    ['first and last swapped', { firstName: 'Obi', lastName: 'Ada' }, 'name_mismatch'],
  ] as const)('%s → %s', (_name, holder, outcome) => {
    expect(bvnOutcome(holder, customer)).toBe(outcome);
  });

  it('folds case fully (WEISS is Weiß) but keeps accents (JOSE is not José)', () => {
    expect(bvnOutcome({ firstName: 'Anna', lastName: 'WEISS' }, { firstName: 'anna', lastName: 'Weiß' })).toBe(
      'verified',
    );
    expect(bvnOutcome({ firstName: 'JOSE', lastName: 'Obi' }, { firstName: 'José', lastName: 'Obi' })).toBe(
      'name_mismatch',
    );
  });
});
