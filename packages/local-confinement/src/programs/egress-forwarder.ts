/**
 * The container's first process when its egress goes through the proxy: a forwarder from a loopback port
 * of the container's own to the proxy's socket, bound into the container. It says `ready` once listening
 * and exits when its stdin closes, like the plain first process. It runs as `node -e` with this Node
 * inside the container, so the build bundles it into one CommonJS program held as text.
 *
 *   node -e <program> <socket path> <port>
 */
import { connect, createServer } from "node:net";

const [socketPath, port] = process.argv.slice(1);
if (socketPath === undefined || port === undefined) {
  process.stderr.write("egress forwarder: <socket path> <port> expected\n");
  process.exit(2);
}

const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
  client.pipe(upstream).pipe(client);
});
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
