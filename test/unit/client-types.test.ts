// The typed client's schema (src/client/schema.ts) is generated from the routes and committed; this
// regenerates it in memory and fails when the committed file has drifted from the routes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLIENT_SCHEMA_PATH, clientSchemaSource } from '../../scripts/client-types.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';

it('src/client/schema.ts is what the routes make now', async () => {
  const committed = readFileSync(join(PROJECT_ROOT, CLIENT_SCHEMA_PATH), 'utf8');
  const generated = await clientSchemaSource();
  if (generated !== committed) {
    const lines = [committed.split('\n'), generated.split('\n')] as const;
    const longer = Math.max(lines[0].length, lines[1].length);
    const first = Array.from({ length: longer }, (_, i) => i).find((i) => lines[0][i] !== lines[1][i]) ?? longer;
    expect.fail(
      `${CLIENT_SCHEMA_PATH} is out of date with the routes (first difference at line ${first + 1}: ` +
        `committed ${JSON.stringify(lines[0][first])}, routes make ${JSON.stringify(lines[1][first])}): ` +
        'run npm run client:types and commit the result',
    );
  }
}, 60_000);
