// Success envelopes. Resource areas (wallet, virtual accounts, cards, …) answer
// {data, meta:{timestamp, requestId}}; transfers have their own shapes in src/transfers.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';

export interface Meta {
  timestamp: string;
  requestId: string;
}

export function meta(request: FastifyRequest): Meta {
  return { timestamp: new Date().toISOString(), requestId: request.id };
}

export function ok<T>(request: FastifyRequest, data: T): { data: T; meta: Meta } {
  return { data, meta: meta(request) };
}

export const MetaSchema = z.object({ timestamp: z.string(), requestId: z.string() });

export function envelopeSchema<T extends z.ZodType>(data: T) {
  return z.object({ data, meta: MetaSchema });
}

/** The resource-style error envelope, for the OpenAPI document. */
export const ResourceErrorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).nullable(),
  }),
  meta: z.object({ path: z.string(), method: z.string(), requestId: z.string() }),
});
