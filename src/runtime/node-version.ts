// The gateway runs on Node 24 LTS; the `node` package in dependencies puts Node 24 first on
// PATH inside npm scripts. Refuse older runtimes with a message that says how to fix it.
export const REQUIRED_NODE_MAJOR = 24;

export function assertNodeVersion(version: string = process.versions.node): void {
  const major = Number(version.split('.')[0]);
  if (major < REQUIRED_NODE_MAJOR) {
    console.error(
      `This gateway needs Node ${REQUIRED_NODE_MAJOR}; this is Node ${version}. ` +
        "Run it through npm (npm start, npm test, npm run admin), which uses the Node 24 from the project's dependencies.",
    );
    process.exit(1);
  }
}
