// A provider's text read as JSON without throwing: what comes from outside becomes a value to
// check, or a failure the caller names in its own words, never an exception.

/** The text parsed as JSON, or `{ ok: false }` when it is not JSON. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
