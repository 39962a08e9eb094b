// Hands each provider callback to whatever acts on its type (a transfer workflow's confirmation
// signal, an inbound credit workflow). Handlers must be idempotent: a callback whose first
// dispatch failed is dispatched again when the provider retries it.

export interface ProviderCallback {
  provider: string;
  eventId: string;
  type: string;
  occurredAt: string | undefined;
  data: Record<string, unknown>;
}

/** Returns a short description of what was done, stored with the callback for operators. */
export type CallbackHandler = (callback: ProviderCallback) => Promise<string>;

export class CallbackDispatcher {
  private readonly handlers = new Map<string, CallbackHandler>();

  on(type: string, handler: CallbackHandler): this {
    this.handlers.set(type, handler);
    return this;
  }

  async dispatch(callback: ProviderCallback): Promise<string> {
    const handler = this.handlers.get(callback.type);
    if (!handler) return `recorded: no handler for ${callback.type}`;
    return handler(callback);
  }
}
