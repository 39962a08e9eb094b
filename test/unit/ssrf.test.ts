// The SSRF guard as an attacker probes it (#14): every spelling of an internal address a URL
// parser or a resolver can produce, userinfo and trailing-dot tricks, and DNS rebinding against
// the request itself. Live keys reach public addresses only; the address dialled is the one checked.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type Resolver, checkDestination, egressPolicyFor } from '../../src/webhooks/destinations.ts';
import { postPinned } from '../../src/webhooks/pinned-post.ts';

const PUBLIC = '93.184.216.34';

/** DNS as the attacker sets it up. */
const records: Record<string, string[]> = {
  'public.example': [PUBLIC],
  'public.example.': [PUBLIC],
  localhost: ['127.0.0.1', '::1'],
  'localhost.': ['127.0.0.1', '::1'],
  'metadata.example': ['169.254.169.254'],
  'mixed.example': [PUBLIC, '127.0.0.1'],
  'mixed-late.example': [PUBLIC, '8.8.8.8', '10.1.2.3'],
  'mapped.example': ['::ffff:10.0.0.1'],
  'compatible.example': ['::7f00:1'],
  'zoned.example': ['fe80::1%eth0'],
  'nat64.example': ['64:ff9b::7f00:1'],
  'garbage.example': ['not-an-address'],
  'empty.example': [],
};
const resolve: Resolver = async (host) => {
  const found = records[host];
  if (!found) throw new Error(`ENOTFOUND ${host}`);
  return found;
};

const refusal = (url: string, mode: 'live' | 'test' = 'live') =>
  checkDestination(url, mode, { resolve }).then(
    () => 'allowed',
    (error: Error) => `${error.name}: ${error.message}`,
  );

/** The refusal of an address outside the public ranges, the address given as `127.0.0.1 (loopback)`. */
const notPublic = (address: string) => `resolves to ${address}, which is not a public address`;

/** Each case's URL is refused with a live key, with the message given. */
function refusesEach(cases: [name: string, url: string, message: string][]): void {
  it.each(cases)('%s: %s is refused', async (_name, url, message) => {
    expect(await refusal(url)).toBe(`DestinationRefused: ${message}`);
  });
}

describe('IP literals in every encoding, with a live key', () => {
  // Each the WHATWG parser turns into an internal address; each must be refused by range. The
  // spellings by the address (and range) they turn into:
  const spellings: Record<string, Record<string, string>> = {
    '127.0.0.1 (loopback)': {
      decimal: 'https://2130706433/',
      hex: 'https://0x7f000001/',
      'hex dotted': 'https://0x7f.0x0.0x0.0x1/',
      octal: 'https://0177.0.0.1/',
      'octal whole': 'https://017700000001/',
      'short form': 'https://127.1/',
      'short form three parts': 'https://127.0.1/',
      'mixed radices': 'https://0x7f.0.00.1/',
      'trailing dot': 'https://127.0.0.1./',
      'fullwidth digits': 'https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/',
      'circled digits': 'https://\u2460\u2461\u2466.0.0.1/',
    },
    '169.254.169.254 (linkLocal)': {
      'cloud metadata decimal': 'https://2852039166/',
      'cloud metadata hex': 'https://0xa9fea9fe/',
    },
    '10.0.0.1 (private)': { 'private octal': 'https://012.0.0.1/', 'private short': 'https://10.1/' },
    '100.64.0.1 (carrierGradeNat)': { 'carrier-grade NAT': 'https://100.64.0.1/' },
    '0.0.0.0 (unspecified)': { zero: 'https://0/' },
    '255.255.255.255 (broadcast)': { broadcast: 'https://4294967295/' },
    '::1 (loopback)': { 'IPv6 loopback': 'https://[::1]/', 'IPv6 loopback long': 'https://[0:0:0:0:0:0:0:1]/' },
    ':: (unspecified)': { 'IPv6 unspecified': 'https://[::]/' },
    '::ffff:7f00:1 (loopback)': {
      'IPv4-mapped': 'https://[::ffff:127.0.0.1]/',
      'IPv4-mapped hex': 'https://[::ffff:7f00:1]/',
    },
    '::ffff:a9fe:a9fe (linkLocal)': { 'IPv4-mapped metadata': 'https://[::ffff:169.254.169.254]/' },
    '::7f00:1 (ipv4Compatible)': { 'IPv4-compatible': 'https://[::127.0.0.1]/' },
    '::5db8:d822 (ipv4Compatible)': { 'IPv4-compatible public': 'https://[::93.184.216.34]/' },
    '::ffff:0:7f00:1 (rfc6145)': { 'SIIT (RFC 6145)': 'https://[::ffff:0:127.0.0.1]/' },
    '64:ff9b::7f00:1 (rfc6052)': { NAT64: 'https://[64:ff9b::127.0.0.1]/' },
    '2002:7f00:1:: (6to4)': { '6to4': 'https://[2002:7f00:1::]/' },
    '2001:0:4136:e378:8000:63bf:3fff:fdd2 (teredo)': { Teredo: 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/' },
    'fe80::1 (linkLocal)': { 'link-local': 'https://[fe80::1]/' },
    'fd00::1 (uniqueLocal)': { 'unique local': 'https://[fd00::1]/' },
  };
  refusesEach(
    Object.entries(spellings).flatMap(([address, named]) =>
      Object.entries(named).map(([name, url]): [string, string, string] => [name, url, notPublic(address)]),
    ),
  );

  it('refuses IPv6 zone ids: the URL parser does not accept them, and a resolver answer with one is link-local', async () => {
    expect(await refusal('https://[fe80::1%25eth0]/')).toBe('DestinationRefused: must be an absolute http(s) URL');
    expect(await refusal('https://[fe80::1%eth0]/')).toBe('DestinationRefused: must be an absolute http(s) URL');
    expect(await refusal('https://zoned.example/')).toBe(
      `DestinationRefused: ${notPublic('fe80::1%eth0 (linkLocal)')}`,
    );
  });

  it('refuses the IPv4-compatible form for sandbox keys too, where loopback itself is allowed', async () => {
    expect(await refusal('http://[::127.0.0.1]:4000/', 'test')).toBe(
      'DestinationRefused: resolves to ::7f00:1 (ipv4Compatible), which is not a public address or loopback',
    );
    expect(await refusal('http://compatible.example:4000/', 'test')).toBe(
      'DestinationRefused: resolves to ::7f00:1 (ipv4Compatible), which is not a public address or loopback',
    );
    expect(await refusal('http://127.0.0.1:4000/', 'test')).toBe('allowed');
  });
});

describe('names and URL tricks, with a live key', () => {
  refusesEach([
    ['credentials before a public host', 'https://user:secret@public.example/', 'must not carry credentials'],
    ['public name as userinfo', 'https://public.example@127.0.0.1/', 'must not carry credentials'],
    ['public name as userinfo with a port', 'https://public.example:443@127.0.0.1/', 'must not carry credentials'],
    ['two at-signs', 'https://a@public.example@127.0.0.1/', 'must not carry credentials'],
    ['empty userinfo', 'https://@127.0.0.1/', notPublic('127.0.0.1 (loopback)')],
    ['fragment hiding the host', 'https://127.0.0.1#@public.example/', notPublic('127.0.0.1 (loopback)')],
    ['backslash hiding the host', 'https://127.0.0.1\\@public.example/', notPublic('127.0.0.1 (loopback)')],
    ['localhost with a trailing dot', 'https://localhost./', notPublic('127.0.0.1 (loopback)')],
    ['localhost in capitals', 'https://LOCALHOST/', notPublic('127.0.0.1 (loopback)')],
    ['a name for the metadata service', 'https://metadata.example/', notPublic('169.254.169.254 (linkLocal)')],
    ['a public and a loopback answer', 'https://mixed.example/', notPublic('127.0.0.1 (loopback)')],
    ['a private address third', 'https://mixed-late.example/', notPublic('10.1.2.3 (private)')],
    ['an IPv4-mapped private answer', 'https://mapped.example/', notPublic('::ffff:10.0.0.1 (private)')],
    ['a NAT64 answer', 'https://nat64.example/', notPublic('64:ff9b::7f00:1 (rfc6052)')],
    [
      'an answer that is no address',
      'https://garbage.example/',
      'host garbage.example resolves to not-an-address, not an IP address',
    ],
    ['no answer', 'https://empty.example/', 'host empty.example does not resolve'],
    ['an unknown name', 'https://nowhere.example/', 'host nowhere.example does not resolve'],
    ['plain http', 'http://public.example/', 'must use https with a live key'],
    ['another scheme', 'file:///etc/passwd', 'must use https with a live key'],
    ['no scheme', '//public.example/', 'must be an absolute http(s) URL'],
  ]);

  it('allows a public name, with or without its trailing dot, pinned to the checked address', async () => {
    for (const url of ['https://public.example/hook', 'https://public.example./hook', 'https://PUBLIC.example/hook']) {
      const { addresses } = await checkDestination(url, 'live', { resolve });
      expect(addresses).toEqual([PUBLIC]);
    }
  });
});

describe('DNS rebinding against the request itself', () => {
  let server: ReturnType<typeof createServer>;
  let port: number;
  const hits: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      hits.push(`${request.headers.host} ${request.url}`);
      response.writeHead(302, { location: `http://127.0.0.1:${port}/followed` }).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('connects to the address that was checked, never looking the name up again, and follows no redirect', async () => {
    // The attacker's resolver answers the check with the receiver's address, and any later
    // question with an address that must never be dialled. The name is not in the system's DNS:
    // a second look-up by the HTTP client would fail the request with ENOTFOUND instead.
    const answers = [['127.0.0.1'], ['10.255.255.1']];
    let lookups = 0;
    const rebinding: Resolver = async () => answers[Math.min(lookups++, 1)]!;
    const { url, addresses } = await checkDestination(`http://rebind.invalid:${port}/hook`, 'test', {
      resolve: rebinding,
    });
    const response = await postPinned(url, addresses, { 'content-type': 'application/json' }, '{}', 5_000);
    expect(lookups).toBe(1);
    expect(response.status).toBe(302);
    expect(hits).toEqual([`rebind.invalid:${port} /hook`]);
  });

  it('refuses at the next attempt a live name that now answers loopback', async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => (lookups++ === 0 ? [PUBLIC] : ['127.0.0.1']);
    await expect(
      checkDestination('https://rebind.invalid/hook', 'live', { resolve: rebinding }),
    ).resolves.toMatchObject({ addresses: [PUBLIC] });
    await expect(checkDestination('https://rebind.invalid/hook', 'live', { resolve: rebinding })).rejects.toThrow(
      notPublic('127.0.0.1 (loopback)'),
    );
  });
});

describe('the metrics ports are in the fence (decisions §12), as the API and the worker build it', () => {
  const localhost: Resolver = async (host) => {
    if (host === 'localhost' || host === 'localhost.') return ['127.0.0.1', '::1'];
    throw new Error(`ENOTFOUND ${host}`);
  };
  const spellings = (port: number) => [
    `http://127.0.0.1:${port}/metrics`,
    `http://localhost.:${port}/metrics`,
    `http://0x7f.0.0.1:${port}/metrics`,
    `http://2130706433:${port}/metrics`,
    `http://127.1:${port}/metrics`,
    `http://[::ffff:127.0.0.1]:${port}/metrics`,
    `http://[::1]:${port}/metrics`,
  ];

  it.each([
    [9464, 'API metrics'],
    [9465, 'worker metrics'],
    [9466, 'webhook worker metrics'],
  ])('refuses :%i (%s) in every spelling with the default configuration', async (port, service) => {
    const policy = { ...egressPolicyFor(loadConfig({})), resolve: localhost };
    for (const url of spellings(port)) {
      await expect(checkDestination(url, 'test', policy), url).rejects.toThrow(
        new RegExp(`port ${port}, where this deployment's ${service} listens`),
      );
    }
  });

  it('follows METRICS_HOST, METRICS_PORT and WORKER_METRICS_PORT, and fences nothing where metrics are off', async () => {
    const moved = {
      ...egressPolicyFor(loadConfig({ METRICS_PORT: '9564', WORKER_METRICS_PORT: '9565' })),
      resolve: localhost,
    };
    await expect(checkDestination('http://127.0.0.1:9564/', 'test', moved)).rejects.toThrow(/API metrics/);
    await expect(checkDestination('http://127.0.0.1:9565/', 'test', moved)).rejects.toThrow(/worker metrics/);
    await expect(checkDestination('http://127.0.0.1:9464/', 'test', moved)).resolves.toBeDefined();
    // Served on every interface (as in docker-compose.yml): every loopback spelling is refused too.
    const everywhere = { ...egressPolicyFor(loadConfig({ METRICS_HOST: '0.0.0.0' })), resolve: localhost };
    await expect(checkDestination('http://127.0.0.2:9465/', 'test', everywhere)).rejects.toThrow(/worker metrics/);
    const off = { ...egressPolicyFor(loadConfig({ METRICS_PORT: '0', WORKER_METRICS_PORT: '0' })), resolve: localhost };
    await expect(checkDestination('http://127.0.0.1:9464/', 'test', off)).resolves.toBeDefined();
    await expect(checkDestination('http://127.0.0.1:9465/', 'test', off)).resolves.toBeDefined();
  });
});
