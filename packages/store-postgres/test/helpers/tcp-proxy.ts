/**
 * A TCP proxy on 127.0.0.1 in front of the test cluster, that can be paused: a partition as the client sees one
 * (no reset, no error, only silence), and healed again (what was sent meanwhile is delivered then, in order).
 */
import net from "node:net";

/** A running proxy: its port, pause (partition) and resume (heal), close. */
export interface TcpProxy {
  port: number;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

/** Starts a proxy to 127.0.0.1:`target`. */
export async function startTcpProxy(target: number): Promise<TcpProxy> {
  let paused = false;
  const held: Array<[net.Socket, Buffer]> = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket): void => {
    from.on("data", (d: Buffer) => (paused ? held.push([to, d]) : to.write(d)));
    from.on("close", () => to.destroy());
    from.on("error", () => undefined);
    sockets.add(from);
    from.on("close", () => sockets.delete(from));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target, "127.0.0.1");
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const [to, d] of held.splice(0)) if (!to.destroyed) to.write(d);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
