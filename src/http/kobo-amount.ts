// The request field every amount is: a whole number of kobo within bounds, refused with messages
// that name the bounds in kobo (and in naira when they are whole naira).
import { z } from 'zod';

const inKobo = (amount: number) =>
  amount >= 100 && amount % 100 === 0
    ? `${amount} kobo (₦${(amount / 100).toLocaleString('en-US')})`
    : `${amount} kobo`;

/** `required`: the message when the field is missing or not a number. */
export function koboAmount(min: number, max: number, required = 'is required') {
  return z
    .number({ error: required })
    .int('must be a whole number of kobo')
    .min(min, min === 0 ? 'must not be negative' : `must be at least ${inKobo(min)}`)
    .max(max, `must be at most ${inKobo(max)}`);
}
