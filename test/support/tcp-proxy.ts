// A TCP proxy in front of a dependency, which a test can pause: while paused, connections stay
// open and bytes are held, exactly as a frozen server looks from the client side (no answer, no
// error), without freezing the server that other test files share.
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';

export interface TcpProxy {
  port: number;
  pause(): void;
  resume(): void;
  /** Cuts every open connection, as a dropped network does; new ones are still taken. */
  drop(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let paused = false;
  const pipes = new Set<{ client: Socket; upstream: Socket }>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pipe = { client, upstream };
    pipes.add(pipe);
    client.pipe(upstream);
    upstream.pipe(client);
    if (paused) {
      client.pause();
      upstream.pause();
    }
    const end = () => {
      pipes.delete(pipe);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    pause() {
      paused = true;
      for (const { client, upstream } of pipes) {
        client.pause();
        upstream.pause();
      }
    },
    resume() {
      paused = false;
      for (const { client, upstream } of pipes) {
        client.resume();
        upstream.resume();
      }
    },
    drop() {
      for (const { client, upstream } of pipes) {
        client.destroy();
        upstream.destroy();
      }
    },
    async close() {
      for (const { client, upstream } of pipes) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
