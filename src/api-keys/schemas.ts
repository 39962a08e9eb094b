// Keys the tenant manages (decisions §19): request and response shapes.
import { z } from 'zod';
import { MAX_ALLOWED_IPS, normaliseIpEntry } from '../http/ip-allow-list.ts';
import { listOf } from '../http/pagination.ts';
import { SCOPES } from '../http/scopes.ts';
import { MAX_SECRET_OVERLAP_HOURS } from '../tenants/tenants.ts';

/** The furthest a key made through the API may be set to expire. */
export const MAX_KEY_LIFETIME_DAYS = 3_650;

const Scope = z.enum(SCOPES, { error: `must be one of ${SCOPES.join(', ')}` });

/** One allow-list entry, written one way (src/http/ip-allow-list.ts); anything else is refused by its index. */
const AllowedIp = z
  .string({ error: 'must be an IPv4 or IPv6 address or CIDR range' })
  .max(64, 'must be an IPv4 or IPv6 address or CIDR range')
  .transform((entry, context) => {
    const normalised = normaliseIpEntry(entry);
    if (normalised === undefined) {
      context.addIssue({
        code: 'custom',
        message: 'must be an IPv4 or IPv6 address or CIDR range, e.g. 203.0.113.0/24',
      });
      return z.NEVER;
    }
    return normalised;
  });

export const CreateKeyBody = z.strictObject({
  name: z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters'),
  scopes: z
    .array(Scope, { error: 'is required: a list of scopes' })
    .min(1, 'must name at least one scope')
    .max(SCOPES.length, `must name at most ${SCOPES.length} scopes`)
    .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope'),
  allowed_ips: z
    .array(AllowedIp, { error: 'must be a list of addresses or CIDR ranges' })
    .max(MAX_ALLOWED_IPS, `must have at most ${MAX_ALLOWED_IPS} entries`)
    .transform((entries) => [...new Set(entries)])
    .optional(),
  expires_at: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 date-time, e.g. 2027-01-31T12:00:00Z' })
    .nullish(),
});
export type CreateKeyBody = z.infer<typeof CreateKeyBody>;

export const RollKeyBody = z
  .strictObject({
    expires_in_hours: z
      .number({ error: 'must be a whole number of hours' })
      .int('must be a whole number of hours')
      .min(0, 'must be 0 or more')
      .max(MAX_SECRET_OVERLAP_HOURS, `must be at most ${MAX_SECRET_OVERLAP_HOURS}`)
      .optional(),
  })
  .nullish();
export type RollKeyBody = z.infer<typeof RollKeyBody>;

export const KeyParams = z.object({ id: z.string() });

export const KeyView = z.object({
  id: z.string(),
  name: z.string(),
  /** The first characters of its newest secret. */
  prefix: z.string(),
  scopes: z.array(z.string()),
  allowed_ips: z.array(z.string()),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type KeyView = z.infer<typeof KeyView>;

/**
 * A key as made or rolled: its secret, shown this once (null in the replay of an Idempotency-Key,
 * since the secret is not stored).
 */
export const KeyWithSecret = KeyView.extend({ secret: z.string().nullable() });

/** A rolled key: its new secret, and until when the secret it had works. */
export const RolledKey = KeyWithSecret.extend({ previous_secret_expires_at: z.string().nullable() });

export const KeyList = listOf(KeyView);
