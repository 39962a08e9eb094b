// WEBHOOK_PROXY_URL (#14): with an egress proxy configured, every webhook delivery goes through it
// — an absolute-form request for http receivers, a CONNECT tunnel for https ones — and the proxy's
// refusal is the attempt's (failed) answer. The gateway still checks the URL first; the proxy resolves the
// name and has the last word on where the connection goes.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { egressPolicyFor } from '../../src/webhooks/destinations.ts';
import { firstAttemptedDelivery, newSigningSecret, registerEndpoint } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { type EgressProxy, startEgressProxy } from '../support/egress-proxy.ts';
import { eventually } from '../support/eventually.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type GatewayStack, fakeDns, startGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `egress-proxy-${process.pid}`;

// The gateway's DNS: names it checks before handing the request to the proxy. Neither resolves in
// the system's DNS, so only the proxy (which has its own table) can connect to them.
const resolver = fakeDns({ 'receiver.invalid': ['127.0.0.1'], 'live-receiver.invalid': ['93.184.216.34'] });

let stack: GatewayStack;
let receiver: Receiver;
let proxy: EgressProxy;
let receiverPort: number;

beforeAll(async () => {
  receiver = await startReceiver();
  receiverPort = Number(new URL(receiver.url).port);
  proxy = await startEgressProxy({ 'receiver.invalid': receiverPort });
  stack = await startGatewayStack({
    taskQueue: TASK_QUEUE,
    resolver,
    webhookProxy: proxy.url,
    webhookScheduleMs: [0, 60_000],
  });
});
afterAll(async () => {
  await stack?.close();
  await proxy?.close();
  await receiver?.close();
});

const firstAttempt = (apiKey: string, endpointId: string) => firstAttemptedDelivery(stack.app, apiKey, endpointId);

describe('WEBHOOK_PROXY_URL', () => {
  it('is read from the environment into the egress policy, and refused when it is no http(s) URL', () => {
    const policy = egressPolicyFor(loadConfig({ NODE_ENV: 'test', WEBHOOK_PROXY_URL: 'http://127.0.0.1:4750' }));
    expect(policy.proxy?.href).toBe('http://127.0.0.1:4750/');
    expect(egressPolicyFor(loadConfig({ NODE_ENV: 'test' })).proxy).toBeUndefined();
    expect(() => loadConfig({ NODE_ENV: 'test', WEBHOOK_PROXY_URL: 'socks5://127.0.0.1:1080' })).toThrow(
      /WEBHOOK_PROXY_URL.*must be an http:\/\/ or https:\/\/ URL/s,
    );
  });

  it('delivers an http webhook through the proxy as an absolute-form request, signed', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const secret = newSigningSecret();
    const url = `http://receiver.invalid:${receiverPort}/through-proxy`;
    const registered = await registerEndpoint(stack.app, tenant.apiKey, {
      url,
      events: ['webhook.endpoint.created'],
      signing_secret: secret,
    });
    expect(registered.statusCode).toBe(201);
    const [request] = await eventually(() => {
      const found = receiver.on('/through-proxy');
      return found.length > 0 ? found : undefined;
    });
    expect(proxy.seen).toContain(`POST ${url}`);
    expect(request!.headers.host).toBe(`receiver.invalid:${receiverPort}`);
    const payload = new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>) as {
      type: string;
      data: { id: string };
    };
    expect(payload.type).toBe('webhook.endpoint.created');
    expect(payload.data.id).toBe(registered.json().data.id);
    const delivery = await firstAttempt(tenant.apiKey, registered.json().data.id);
    expect(delivery.attempts[0]).toMatchObject({ status_code: 200, error: null });
  });

  it("asks the proxy to CONNECT for an https receiver, and records the proxy's refusal as the attempt's answer", async () => {
    const live = await createFundedTenant(stack.db.orm, 1_000_000, 'live tenant behind a proxy', 'live');
    const registered = await registerEndpoint(stack.app, live.apiKey, {
      url: 'https://live-receiver.invalid/hook',
      events: ['webhook.endpoint.created'],
      signing_secret: newSigningSecret(),
    });
    expect(registered.statusCode).toBe(201);
    const delivery = await firstAttempt(live.apiKey, registered.json().data.id);
    expect(proxy.seen).toContain('CONNECT live-receiver.invalid:443');
    // The proxy's answer to CONNECT stands for the receiver's (as with smokescreen's denials): a
    // failed attempt, retried on the schedule like any other.
    expect(delivery.attempts[0]).toMatchObject({ status_code: 403, error: null });
    expect(delivery.status).toBe('retrying');
  });

  it('still refuses, before the proxy is asked, a URL the guard refuses', async () => {
    const live = await createFundedTenant(stack.db.orm, 1_000_000, 'live tenant probing loopback', 'live');
    const seenBefore = proxy.seen.length;
    const refused = await registerEndpoint(stack.app, live.apiKey, {
      url: 'https://[::ffff:127.0.0.1]/hook',
      events: ['webhook.endpoint.created'],
      signing_secret: newSigningSecret(),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.details.fields).toEqual([
      {
        path: 'url',
        message: expect.stringContaining('resolves to ::ffff:7f00:1 (loopback), which is not a public address'),
      },
    ]);
    expect(proxy.seen.length).toBe(seenBefore);
  });
});
