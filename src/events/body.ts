// What a tenant receives for an event, by webhook and on the event stream alike: its id, type, time
// and data, and `"test": true` for a test event (decisions §15).
export function eventBody(event: {
  id: string;
  type: string;
  created_at: Date | string;
  payload: Record<string, unknown>;
  test?: boolean;
}): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: new Date(event.created_at).toISOString(),
    data: event.payload,
    ...(event.test ? { test: true } : {}),
  });
}
