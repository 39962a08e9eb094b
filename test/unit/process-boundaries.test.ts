// The processes as the tree shows them (src/README.md, worker/README.md, src/sandbox-bank/README.md):
// each entry point's transitive imports, read from the sources, stay inside what its folder may
// import. The sandbox bank shares nothing with the API but the generic bank contract; the API
// reaches neither the bank nor the worker-only loops; src/runtime/ imports nothing of the gateway.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every project file the entry reaches through relative imports (type-only ones too), repo-relative. */
function reach(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = relative(PROJECT_ROOT, resolve(dirname(join(PROJECT_ROOT, file)), match[1]!));
      if (!existsSync(join(PROJECT_ROOT, target))) throw new Error(`${file} imports ${match[1]}, which is not there`);
      queue.push(target);
    }
  }
  return seen;
}

const outside = (files: Set<string>, allowed: (file: string) => boolean) => [...files].filter((file) => !allowed(file));

describe('process boundaries', () => {
  it('the sandbox bank imports only its own folder, the generic contract and src/runtime/', () => {
    const reached = reach('src/sandbox-bank/server.ts');
    expect(reached).toContain('src/connectors/generic/contract.ts');
    expect(
      outside(
        reached,
        (file) =>
          file.startsWith('src/sandbox-bank/') ||
          file.startsWith('src/runtime/') ||
          file === 'src/connectors/generic/contract.ts',
      ),
    ).toEqual([]);
  });

  it('src/runtime/ and the generic contract import nothing of the gateway', () => {
    for (const entry of [
      'src/connectors/generic/contract.ts',
      'src/runtime/secrets.ts',
      'src/runtime/log-masking.ts',
    ]) {
      expect(
        outside(reach(entry), (file) => file.startsWith('src/runtime/') || file === entry),
        entry,
      ).toEqual([]);
    }
  });

  it('the API reaches neither the sandbox bank nor the worker', () => {
    const reached = reach('src/server.ts');
    expect(reached).toContain('src/connectors/generic/contract.ts');
    expect(outside(reached, (file) => !file.startsWith('src/sandbox-bank/') && !file.startsWith('worker/'))).toEqual(
      [],
    );
  });
});
