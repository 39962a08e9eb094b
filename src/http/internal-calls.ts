// Calls the API makes to itself on a person's behalf (the console, decisions §22): a page runs the
// same route, with the same validation, scopes, services and envelope, as a client with a key would,
// through Fastify's inject. The caller hands the identity it acts as (a ResolvedKey built from the
// person's session and role) to `issue`, which answers a one-time random ticket; the request carries
// it in INTERNAL_CALL_HEADER and the auth hook takes it back (./auth.ts). A ticket is 256 random bits,
// lives for one request and exists only in this process's memory: a header sent from outside names
// no ticket and is refused as an invalid key.
import { randomBytes } from 'node:crypto';

export const INTERNAL_CALL_HEADER = 'x-gateway-internal-call';

/** `Identity`: what a ticket stands for (the API's ResolvedKey: ./auth.ts). */
export class InternalCalls<Identity> {
  readonly #pending = new Map<string, Identity>();

  /** A ticket for one request acting as `key`; `done` forgets it if the request never used it. */
  issue(key: Identity): { ticket: string; done: () => void } {
    const ticket = randomBytes(32).toString('base64url');
    this.#pending.set(ticket, key);
    return { ticket, done: () => this.#pending.delete(ticket) };
  }

  /** The identity a ticket was issued for, once. */
  take(ticket: string): Identity | undefined {
    const key = this.#pending.get(ticket);
    this.#pending.delete(ticket);
    return key;
  }
}
