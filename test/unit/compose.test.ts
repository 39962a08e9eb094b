// docker-compose.yml as an attacker on the network would meet it (decisions §16): only the API
// (3000) and the balancer (3001) are published on the host's interfaces; everything else stays on
// the compose network or on 127.0.0.1; and the secrets have no defaults, so a deployment cannot run
// on values printed in this repository. Read with a YAML parser (merge keys resolved, as compose
// does), so the check does not need docker-compose; docs/running.md, "Docker Compose", describes the file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SECRET_VARIABLES } from '../../src/runtime/secrets.ts';
import { SANDBOX_BANK_SECRETS } from '../../src/sandbox-bank/config.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';

interface Service {
  ports?: (string | number | { target: number; published?: number | string; host_ip?: string })[];
  environment?: Record<string, string> | string[];
}

const text = readFileSync(join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8');
const compose = parse(text, { merge: true }) as { services: Record<string, Service> };

/** Where a `ports:` entry is published: host address ('' when every interface) and host port. */
function publication(entry: NonNullable<Service['ports']>[number]): { hostIp: string; published: number | undefined } {
  if (typeof entry === 'object') {
    return {
      hostIp: entry.host_ip ?? '',
      published: entry.published === undefined ? undefined : Number(entry.published),
    };
  }
  // [HOST_IP:][HOST_PORT:]CONTAINER_PORT[/PROTOCOL], IPv6 host addresses in brackets.
  const parts = String(entry)
    .replace(/\/\w+$/, '')
    .match(/^(?:(\[[^\]]+\]|(?:\d+\.){3}\d+):)?(?:(\d+(?:-\d+)?):)?(\d+(?:-\d+)?)$/);
  if (!parts) throw new Error(`unreadable ports entry ${String(entry)}`);
  return { hostIp: (parts[1] ?? '').replace(/^\[|\]$/g, ''), published: parts[2] ? Number(parts[2]) : undefined };
}

function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return env;
  return Object.fromEntries(env.map((item) => [item.split('=')[0], item.slice(item.indexOf('=') + 1)]));
}

describe('docker-compose.yml', () => {
  it('publishes the API and the balancer on the host, and everything else on 127.0.0.1 or nowhere', () => {
    const everywhere: string[] = [];
    const loopbackOnly: string[] = [];
    for (const [name, service] of Object.entries(compose.services)) {
      for (const entry of service.ports ?? []) {
        const { hostIp, published } = publication(entry);
        // A container port without a host port is still published, on a random host port.
        const where = `${name}:${published ?? 'random'}`;
        if (hostIp === '127.0.0.1' || hostIp === '::1') loopbackOnly.push(where);
        else everywhere.push(where);
      }
    }
    expect(everywhere.sort()).toEqual(['api:3000', 'balancer:3001']);
    // What a developer may still open on this machine; Temporal's frontend is not even there.
    expect(loopbackOnly.sort()).toEqual([
      'grafana:3300',
      'jaeger:16686',
      'prometheus:9090',
      'sandbox-bank:4010',
      'temporal-ui:8080',
    ]);
    expect(compose.services.temporal?.ports).toBeUndefined();
  });

  it('requires every secret with ${VAR:?…} and gives none a default, in every gateway service', () => {
    const secrets = Object.keys(SECRET_VARIABLES);
    // Anywhere in the file: a secret is only ever interpolated as required.
    for (const name of secrets) {
      const uses = [...text.matchAll(new RegExp(`\\$\\{${name}([^A-Z_][^}]*)?\\}`, 'g'))].map((match) => match[1]);
      expect(uses.length, name).toBeGreaterThan(0);
      for (const use of uses) expect(use, `\${${name}${use}}`).toMatch(/^:\?/);
    }
    // And every process of the gateway gets all of them (the API needs the control token and the API key too).
    for (const name of ['api', 'api-2', 'worker', 'worker-2', 'setup']) {
      const env = environmentOf(compose.services[name]!);
      expect(env.NODE_ENV, name).toBe('production');
      for (const secret of secrets)
        expect(env[secret], `${name} ${secret}`).toMatch(new RegExp(`^\\$\\{${secret}:\\?`));
    }
  });

  it("gives the sandbox bank, a process of its own, its own secrets, required, and none of the API's others", () => {
    const env = environmentOf(compose.services['sandbox-bank']!);
    expect(env.NODE_ENV).toBe('production');
    for (const secret of SANDBOX_BANK_SECRETS) {
      expect(env[secret], secret).toMatch(new RegExp(`^\\$\\{${secret}:\\?`));
    }
    const others = Object.keys(SECRET_VARIABLES).filter(
      (secret) => !(SANDBOX_BANK_SECRETS as string[]).includes(secret),
    );
    expect(others.sort()).toEqual(['BVN_SECRET_KEY', 'WEBHOOK_ENCRYPTION_KEY']);
    for (const secret of others) expect(env[secret], secret).toBeUndefined();
  });
});
