import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A Postgres server of the tests' own, in a temporary folder. */
export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`; the superuser logs in without a password (trust). */
  readonly url: string;
  /** Stops the server (fast shutdown: sessions are ended); its data stays. */
  stop(): Promise<void>;
  /** Starts the stopped server again on the same port. */
  start(): Promise<void>;
  /** Stops the server and removes its folder. */
  remove(): Promise<void>;
}

const READY_WITHIN_MS = 120_000;

/** The folder holding `initdb` and `postgres`: `OMA_POSTGRES_BIN`, else Debian's newest, else PATH. */
function binDir(): string | undefined {
  if (process.env.OMA_POSTGRES_BIN) return process.env.OMA_POSTGRES_BIN;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/**
 * Postgres refuses to run as root. As root, the server runs as the `postgres` user (Debian's package creates
 * it) or else `nobody`, through util-linux's setpriv; otherwise as the current user.
 */
function serverUser(): { readonly uid: number; readonly gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    try {
      const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim());
      return { uid, gid };
    } catch {
      // No such user; try the next.
    }
  }
  throw new Error(
    "running as root, but neither a postgres nor a nobody user exists to run the test Postgres as",
  );
}

/** The temporary folder if the server user can enter it (a test run's own may be root's alone), else /tmp. */
function reachableTemp(user: { readonly uid: number; readonly gid: number }): string {
  try {
    execFileSync(
      "setpriv",
      [
        `--reuid=${user.uid}`,
        `--regid=${user.gid}`,
        "--clear-groups",
        "--",
        "test",
        "-w",
        tmpdir(),
      ],
      { stdio: "ignore" },
    );
    return tmpdir();
  } catch {
    return "/tmp";
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

/** Options of {@link startPostgresCluster}. */
export interface PostgresClusterOptions {
  /** Keep Postgres' default durability (fsync, synchronous commit): for benchmarks. @default false */
  readonly durable?: boolean;
}

/**
 * Creates a cluster with `initdb` in a new temporary folder and starts `postgres` on a free port of 127.0.0.1,
 * durability traded for speed unless `durable` (fsync off: the data is thrown away). Nothing needs to run
 * beforehand.
 */
export async function startPostgresCluster(
  options: PostgresClusterOptions = {},
): Promise<PostgresCluster> {
  const bin = binDir();
  const initdb = bin === undefined ? "initdb" : join(bin, "initdb");
  const postgres = bin === undefined ? "postgres" : join(bin, "postgres");
  if (bin === undefined) {
    try {
      execFileSync("which", ["initdb"], { stdio: "ignore" });
    } catch {
      throw new Error(
        "Postgres is not installed: initdb was not found (scripts/bootstrap.sh installs Debian's postgresql)",
      );
    }
  }
  const user = serverUser();
  const folder = await mkdtemp(join(user ? reachableTemp(user) : tmpdir(), "oma-postgres-"));
  const data = join(folder, "data");
  const sockets = join(folder, "sockets");
  await mkdir(sockets);
  if (user) {
    await chown(folder, user.uid, user.gid);
    await chown(sockets, user.uid, user.gid);
  }
  const as = (command: string, args: string[]): [string, string[]] =>
    user
      ? [
          "setpriv",
          [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--", command, ...args],
        ]
      : [command, args];

  try {
    const [command, args] = as(initdb, [
      "-D",
      data,
      "-U",
      "postgres",
      "--auth=trust",
      "--no-sync",
      "-E",
      "UTF8",
      "--locale=C",
    ]);
    execFileSync(command, args, { stdio: "pipe", cwd: folder });
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(
      `initdb failed (is ${folder}'s parent reachable by the server user?): ${stderr || String(error)}`,
    );
  }

  let port = 0;
  let child: ChildProcess | undefined;
  const log = join(folder, "postgres.log");
  const launch = async (): Promise<void> => {
    const [command, args] = as(postgres, [
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      sockets,
      "-h",
      "127.0.0.1",
      ...(options.durable
        ? []
        : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
      "-c",
      "max_connections=200",
      "-c",
      "shared_buffers=32MB",
      "-c",
      `logging_collector=off`,
    ]);
    const started = spawn("sh", ["-c", `exec "$0" "$@" 2>>"${log}"`, command, ...args], {
      stdio: "ignore",
      cwd: folder,
    });
    child = started;
    const exited = new Promise<number | null>((resolve) =>
      started.once("exit", (code) => resolve(code)),
    );
    const deadline = Date.now() + READY_WITHIN_MS;
    for (;;) {
      const code = await Promise.race([
        exited,
        new Promise<"wait">((resolve) => setTimeout(() => resolve("wait"), 200)),
      ]);
      if (code !== "wait")
        throw new Error(
          `postgres exited with ${code}: ${await readFile(log, "utf8").catch(() => "")}`,
        );
      if (isReady(bin, port)) return;
      if (Date.now() > deadline)
        throw new Error(`postgres did not accept connections within ${READY_WITHIN_MS} ms`);
    }
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    running.kill("SIGINT");
    await exited;
  };

  try {
    for (let attempt = 0; ; attempt += 1) {
      port = await freePort();
      try {
        await launch();
        break;
      } catch (error) {
        // Another process may have taken the port between the probe and the bind.
        if (attempt >= 2 || !/could not (bind|create listen)/i.test(String(error))) throw error;
      }
    }
  } catch (error) {
    await stop();
    await rm(folder, { recursive: true, force: true });
    throw error;
  }

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start: launch,
    async remove() {
      await stop();
      await rm(folder, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

function isReady(bin: string | undefined, port: number): boolean {
  try {
    execFileSync(
      bin === undefined ? "pg_isready" : join(bin, "pg_isready"),
      ["-q", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres"],
      { stdio: "ignore" },
    );
    return true;
  } catch {
    return false;
  }
}
