/**
 * A TCP proxy on 127.0.0.1 in front of the test cluster, that can be paused: a partition as the client sees one
 * (no reset, no error, only silence), and healed again (what was sent meanwhile is delivered then, in order).
 * By default a connection closed by either side is closed on the other at once, paused or not; with `holdEnds`
 * the close is held too, as a real partition holds it (a client's goodbye gets no answer until the link heals).
 */
import net from "node:net";

/** A running proxy: its port, pause (partition) and resume (heal), close. */
export interface TcpProxy {
  port: number;
  /** Connections accepted so far (a client's new connection is seen here even while paused). */
  readonly accepted: number;
  /** The chunks of data the pause holds back now (goodbyes not counted): above 0 once a client sent something. */
  readonly holding: number;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

type Held = [net.Socket, Buffer | "end" | "destroy"];

/** Starts a proxy to 127.0.0.1:`target`. */
export async function startTcpProxy(target: number, options: { holdEnds?: boolean } = {}): Promise<TcpProxy> {
  const holdEnds = options.holdEnds === true;
  let paused = false;
  const held: Held[] = [];
  const sockets = new Set<net.Socket>();
  const deliver = ([to, what]: Held): void => {
    if (to.destroyed) return;
    if (what === "end") to.end();
    else if (what === "destroy") to.destroy();
    else to.write(what);
  };
  const pass = (to: net.Socket, what: Held[1]): void => (paused ? void held.push([to, what]) : deliver([to, what]));
  const forward = (from: net.Socket, to: net.Socket): void => {
    from.on("data", (d: Buffer) => pass(to, d));
    if (holdEnds) {
      from.on("end", () => pass(to, "end"));
      from.on("close", () => pass(to, "destroy"));
    } else from.on("close", () => to.destroy());
    from.on("error", () => undefined);
    sockets.add(from);
    from.on("close", () => sockets.delete(from));
  };
  let accepted = 0;
  const server = net.createServer({ allowHalfOpen: holdEnds }, (client) => {
    accepted++;
    const upstream = net.connect({ port: target, host: "127.0.0.1", allowHalfOpen: holdEnds });
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    get holding() {
      return held.filter(([, what]) => typeof what !== "string").length;
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const h of held.splice(0)) deliver(h);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
