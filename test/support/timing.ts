// How long something took, for tests that check an answer came in time (decisions §12: within a
// second, within the dependency deadline). Bounds, not benchmarks.
export async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}
