import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (here: the shared MariaDB), so a test can
 * simulate losing that server without touching it: `cut()` destroys every proxied connection and
 * stops listening (new connections are refused), `restore()` listens again on the same port.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Starts listening (on a port of the OS's choosing the first time, on the same port after a cut); does nothing while listening. */
  async start(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      this.track(client);
      this.track(upstream);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** The server "goes away": open connections are destroyed at once and new ones are refused. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = server ? new Promise((resolve) => server.close(resolve)) : Promise.resolve();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  /** The server "comes back" on the same port. */
  async restore(): Promise<void> {
    await this.start();
  }

  async close(): Promise<void> {
    await this.cut();
  }

  /** A URL of the same form as `url`, pointing at this proxy. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}
