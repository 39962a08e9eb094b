// What a feature brings to the gateway, declared once in its own index.ts (src/<feature>/index.ts):
// its entities, its event types, its operator commands, its sweeps, and what it adds to the API (routes, and the handlers of the
// provider callbacks it acts on or answers). The list of features is src/features.ts; the API
// (src/app.ts), the ORM (src/orm.ts) and the operator CLI (src/admin-cli/) read it. The shared
// modules below (src/db, src/events, src/http, src/admin) import no feature: they take what they
// need as parameters.
import type { EntitySchema } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { OperatorCommand } from './admin/command.ts';
import type { EventTypeEntries } from './events/catalog.ts';
import type { Config } from './config.ts';
import type { Providers } from './connectors/registry.ts';
import type { GatewayMetrics } from './metrics/metrics.ts';
import type { SweepLog } from './runtime/sweep.ts';
import type { CallbackDispatcher } from './provider-callbacks/dispatcher.ts';
import type { EgressPolicy } from './webhooks/destinations.ts';
import type { InternalCalls } from './http/internal-calls.ts';
import type { ResolvedKey } from './http/auth.ts';

/** The configuration the API reads. */
export type ApiConfig = Pick<
  Config,
  | 'LOG_LEVEL'
  | 'BODY_LIMIT_BYTES'
  | 'RATE_LIMIT_PER_MINUTE'
  | 'RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE'
  | 'BULK_ITEMS_PER_MINUTE'
  | 'API_KEY_CACHE_MS'
  | 'TRUST_PROXY'
  | 'CONSOLE_URL'
  | 'TEMPORAL_NAMESPACE'
  | 'TEMPORAL_TASK_QUEUE'
  | 'webhookTaskQueue'
  | 'providerCallbackSecret'
  | 'webhookEncryptionKey'
  | 'bvnSecretKey'
  | 'webhookRetryScheduleMs'
  | 'DEPENDENCY_TIMEOUT_MS'
  | 'NAME_ENQUIRY_CACHE_MS'
  | 'HEADERS_TIMEOUT_MS'
  | 'REQUEST_TIMEOUT_MS'
  | 'STREAM_MAX_PER_KEY'
  | 'STREAM_BUFFER_BYTES'
>;

/** What the API gives each feature that registers on it. */
export interface ApiContext {
  config: ApiConfig;
  orm: MikroORM;
  /** The API's Temporal client (traced when tracing is on). */
  client: Client;
  temporal: Connection;
  providers: Providers;
  /** Provider callbacks: a feature registers the types it acts on, or answers, here. */
  dispatcher: CallbackDispatcher;
  metrics: GatewayMetrics;
  /** Where webhooks may go: loopback for sandbox keys, never the deployment's own services. */
  egress: EgressPolicy;
  /** The calls the app makes to itself on a person's behalf (the console; src/http/internal-calls.ts). */
  internalCalls: InternalCalls<ResolvedKey>;
  /** Continue-as-new threshold for new card workflows (tests make it small). */
  cardContinueAsNewAfter?: number;
  /** How long a transfer policy's approval hour lasts, in ms (an hour; tests make it short). */
  approvalHourMs?: number;
}

/** What the worker gives each feature's sweeps (src/runtime/sweep.ts). */
export interface SweepContext {
  orm: MikroORM;
  client: Client;
  /** TEMPORAL_TASK_QUEUE: where what a sweep starts runs (or beside it, on its lane). */
  taskQueue: string;
  log: SweepLog;
}

/** A loop the worker starts with its Workers and stops after them. */
export interface WorkerLoop {
  start(): void;
  stop(): Promise<void>;
}

export interface Feature {
  /** As its folder is named. */
  readonly name: string;
  /** Its MikroORM entities; its tables come from the numbered migrations (src/db/migrations/). */
  readonly entities?: readonly EntitySchema[];
  /**
   * The event types it records (src/<feature>/event-types.ts): each one's description, the schema
   * of its data and a sample, for the event catalog (decisions §15).
   */
  readonly events?: EventTypeEntries;
  /** Its operator commands (src/<feature>/admin.ts), in the order the usage text lists them. */
  readonly commands?: readonly OperatorCommand[];
  /**
   * The sweeps the worker runs for it: the loops that finish a hand-over to Temporal that a
   * process lost (src/runtime/sweep.ts). Its activities and workflows are not declared here: the
   * API process never loads them (activities/index.ts and workflows/index.ts assemble them for the
   * worker and its bundle, each a folder per feature).
   */
  readonly sweeps?: (context: SweepContext) => readonly WorkerLoop[];
  /** Adds its routes and callback handlers to the API, in the list's order. */
  readonly api?: (app: FastifyInstance, context: ApiContext) => void | Promise<void>;
}
