// What a deployment may not run a live connector on (decisions §18), checked at start with the rest
// of the configuration (src/config.ts), from what each connector declares of its variables
// (./types.ts, ConnectorVariables). A live connector moves real money: credited by its provider's
// signed callbacks, it funds wallets that another connector pays out for real. So with
// NODE_ENV=production a credential of the provider's test mode (whose simulated payments arrive
// signed like real ones) and a provider URL that is not https stop the start; and wherever the
// deployment is exposed (production, or the API beyond loopback) its secrets follow every secret's
// rules (src/runtime/secrets.ts): at least 32 bytes, none the repository publishes. Outside
// production a test credential is allowed, and said once, as a warning.
import { exposedValueIssue } from '../runtime/secrets.ts';
import type { ConnectorVariables } from './types.ts';

export interface LiveConnectorRules {
  /** Each a `VARIABLE: why` line. */
  issues: string[];
  warnings: string[];
}

export function liveConnectorRules(
  connector: ConnectorVariables & { name: string },
  env: Readonly<Record<string, string>>,
  deployment: { production: boolean; exposed: string | undefined },
): LiveConnectorRules {
  const issues: string[] = [];
  const warnings: string[] = [];
  const test = connector.testCredential?.(env);
  if (test && deployment.production) {
    issues.push(
      `${test.variable}: is ${test.what}: a live connector takes the provider's live credentials when NODE_ENV=production`,
    );
  } else if (test) {
    warnings.push(
      `${test.variable} is ${test.what}: the live connector ${connector.name} credits and pays out in the provider's test mode (refused when NODE_ENV=production)`,
    );
  }
  if (deployment.exposed) {
    for (const [variable, secret] of Object.entries(connector.secrets)) {
      // One line per variable: a test credential is refused for that already.
      const value = env[variable];
      if (value === undefined || (test?.variable === variable && deployment.production)) continue;
      const message = exposedValueIssue(value, secret.bytes(value), deployment.exposed, secret.example);
      if (message) issues.push(`${variable}: ${message}`);
    }
  }
  if (deployment.production) {
    for (const variable of connector.baseUrls) {
      const value = env[variable];
      if (value !== undefined && URL.canParse(value) && new URL(value).protocol !== 'https:') {
        issues.push(`${variable}: must be an https:// URL when NODE_ENV=production`);
      }
    }
  }
  return { issues, warnings };
}
