// The console's pages: Eta templates (src/console/views/*.eta) that escape every value they print
// (`<%= %>`; the raw `<%~ %>` only ever prints another template's output: the layout's body and
// includes). Amounts are integer kobo, shown as naira exactly (BigInt, never a float); times in
// Lagos time.
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';
import type { Scope } from '../http/scopes.ts';
import type { Role } from './store.ts';
import { roleHolds } from './roles.ts';

const eta = new Eta({
  views: fileURLToPath(new URL('./views', import.meta.url)),
  autoEscape: true,
  cache: true,
  varName: 'it',
});

/** `₦1,502,500.00` from kobo, exact for any integer (a number, a bigint or its decimal string). */
export function naira(minor: number | bigint | string | null | undefined): string {
  if (minor === null || minor === undefined || minor === '') return '—';
  let value: bigint;
  try {
    value = BigInt(minor);
  } catch {
    return String(minor);
  }
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const kobo = (abs % 100n).toString().padStart(2, '0');
  return `${negative ? '−' : ''}₦${whole}.${kobo}`;
}

const LAGOS = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Africa/Lagos',
  year: 'numeric',
  month: 'short',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
});

/** `03 Dec 2026, 14:30:04` (Lagos time) from an ISO string or Date; `—` for none. */
export function when(value: string | Date | null | undefined): string {
  if (!value) return '—';
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : LAGOS.format(date);
}

/** A value as indented JSON (metadata, payloads), for a <pre>: escaped like every other value. */
export function json(value: unknown): string {
  return JSON.stringify(value ?? null, null, 2);
}

export const FORMAT = { naira, when, json };

/** What every page's layout needs. */
export interface PageFrame {
  title: string;
  /** The navigation entry it belongs to (see views/layout.eta). */
  section: string;
  user: { email: string; role: Role };
  mode: 'test' | 'live';
  csrf: string;
  /** The path of this page, for the mode switch to come back to. */
  path: string;
  /** Whether the tenant has a live mode. */
  hasLive: boolean;
  notice?: string | undefined;
}

/** Renders a template to a string (no layout of its own unless the template asks for one). */
export function renderTemplate(template: string, data: Record<string, unknown>): string {
  return eta.render(template, { ...data, fmt: FORMAT });
}

/** Sends a console page: its template inside the layout, with the frame every page has. */
export function sendPage(
  reply: FastifyReply,
  template: string,
  frame: PageFrame,
  data: Record<string, unknown> = {},
  status = 200,
): FastifyReply {
  const can = (scope: Scope) => roleHolds(frame.user.role, scope);
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .send(renderTemplate(template, { ...data, frame, can }));
}

/** Sends a page outside the signed-in layout (sign-in, invitations, errors before a session). */
export function sendBarePage(
  reply: FastifyReply,
  template: string,
  data: Record<string, unknown>,
  status = 200,
): FastifyReply {
  return reply.status(status).type('text/html; charset=utf-8').send(renderTemplate(template, data));
}
