// Ports for the servers a test or benchmark starts and may restart. They are taken below the
// kernel's ephemeral range (net.ipv4.ip_local_port_range): a port the kernel handed out for
// `listen(0)` lies inside that range, and once its server stops (the chaos run kills the API and
// starts it again) any outgoing connection — a pooled PostgreSQL client, a gRPC channel — may be
// given the same number as its local port and hold it for as long as it lives, so the restarted
// server fails with EADDRINUSE. Below the range only a listener can take a port.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // Not Linux: IANA's dynamic range, which macOS and Windows use.
  }
  return [49152, 65535];
}

/** The band ports are drawn from: the registered ports below the ephemeral range. */
function band(): [number, number] {
  const [low] = ephemeralRange();
  const top = Math.min(low - 1, 49151);
  return top - 12000 >= 1024 ? [top - 12000, top] : [1024, Math.max(top, 1024)];
}

const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Ports free right now, distinct from each other and from every port this process handed out. */
export async function freePorts(count: number): Promise<number[]> {
  const [from, to] = band();
  const ports: number[] = [];
  for (let tries = 0; ports.length < count; tries++) {
    if (tries > 1000) throw new Error(`no free port between ${from} and ${to}`);
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    ports.push(port);
  }
  return ports;
}

export async function freePort(): Promise<number> {
  const [port] = (await freePorts(1)) as [number];
  return port;
}
