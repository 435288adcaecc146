// The parts the tests drive, started as a person would: `fideliza serve
// --demo` on a fresh embedded SQLite database, accepting the tokens of a
// fake OpenID provider too, and the built app served by `vite preview` on
// another loopback port, so that every call the app makes is cross-origin;
// and the app built for that provider (SSO) on a third port.
import { spawn, execFile } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { startProvider } from "./idp.mjs";

const run = promisify(execFile);
const here = resolve(import.meta.dirname, "..");
const repo = resolve(here, "../..");

// The demo's year takes 40 s on an idle 2-core machine, minutes beside
// other work.
const readyTimeout = 8 * 60_000;

async function freePort() {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address();
  srv.close();
  await once(srv, "close");
  return port;
}

// until polls check until it answers something other than undefined, or
// throws after timeout; exited stops it early with the process's output.
async function until(what, timeout, check, exited) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const failure = exited?.();
    if (failure) throw new Error(`${what}: ${failure}`);
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeout / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function capture(child) {
  const out = { stdout: "", stderr: "", exit: null };
  child.stdout.setEncoding("utf8").on("data", (s) => (out.stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (out.stderr = (out.stderr + s).slice(-20_000)));
  child.on("exit", (code, signal) => (out.exit = signal ?? code));
  return out;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  await exited;
  clearTimeout(timer);
}

// ssoClientID is the app's client at the provider, and so the audience the
// API requires of the provider's tokens (its ID tokens name the client).
export const ssoClientID = "fideliza-backoffice";

// preview serves a built app (outDir) on port with `vite preview`, the port
// given as BACKOFFICE_PORT as the README says.
async function preview(outDir, port) {
  const vite = join(here, "node_modules", ".bin", "vite");
  const child = spawn(vite, ["preview", "--outDir", outDir], {
    cwd: here,
    env: { ...process.env, BACKOFFICE_PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = capture(child);
  const url = `http://127.0.0.1:${port}`;
  const ready = until(`vite preview of ${outDir}`, 60_000, async () => ((await fetch(url)).ok ? true : undefined),
    () => out.exit !== null && `vite preview exited (${out.exit}):\n${out.stderr}`);
  return { child, url, ready };
}

// binary is FIDELIZA_BIN, else the binary built from this checkout.
async function binary(dir) {
  if (process.env.FIDELIZA_BIN) return process.env.FIDELIZA_BIN;
  const bin = join(dir, "fideliza");
  await run("go", ["build", "-o", bin, "./cmd/fideliza"], { cwd: repo, maxBuffer: 1 << 24 });
  return bin;
}

// startStack starts the provider, the API and the apps; stop() ends them and
// removes the temporary data directory.
export async function startStack() {
  const dist = join(here, "dist", "index.html");
  if (!existsSync(dist)) throw new Error("no dist/: run `npm run build` before `npm test`");
  const dir = await mkdtemp(join(tmpdir(), "fideliza-backoffice-"));
  const children = [];
  let idp;
  const stack = {
    async stop() {
      await Promise.all(children.map(stop));
      await idp?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    const t0 = performance.now();
    idp = await startProvider();
    const bin = await binary(dir);
    const built = performance.now();
    const [apiPort, appPort, ssoPort] = [await freePort(), await freePort(), await freePort()];
    const api = `http://127.0.0.1:${apiPort}`;
    const app = `http://127.0.0.1:${appPort}`;
    const ssoApp = `http://127.0.0.1:${ssoPort}`;
    const db = ["--database-url", `sqlite://${join(dir, "fideliza.db")}`];

    const serve = spawn(
      bin,
      [...db, "--json", "serve", "--demo", "--addr", `127.0.0.1:${apiPort}`, "--cors-origins", `${app},${ssoApp}`,
        "--oidc-issuer", idp.url, "--oidc-audience", ssoClientID],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(serve);
    const served = capture(serve);
    const exited = () => served.exit !== null && `serve exited (${served.exit}):\n${served.stderr}`;

    // The app for the provider, built while the demo's year plays.
    const ssoDist = join(dir, "dist-sso");
    await run(join(here, "node_modules", ".bin", "vite"), ["build", "--outDir", ssoDist, "--emptyOutDir"], {
      cwd: here,
      env: { ...process.env, VITE_OIDC_ISSUER: idp.url, VITE_OIDC_CLIENT_ID: ssoClientID },
      maxBuffer: 1 << 24,
    });

    // Ready: /readyz answers 200 and the demo's credentials are printed.
    const demo = await until("serve --demo ready", readyTimeout, async () => {
      const r = await fetch(`${api}/readyz`);
      return r.ok ? JSON.parse(served.stdout) : undefined;
    }, exited);

    const ready = performance.now();
    console.log(`binary ${Math.round((built - t0) / 1000)} s, serve --demo ready ${Math.round((ready - built) / 1000)} s`);

    const { stdout } = await run(bin, [...db, "--json", "--public-url", api, "user", "token", "--tenant", demo.tenant_id]);
    const token = JSON.parse(stdout).access_token;

    const previews = [await preview(join(here, "dist"), appPort), await preview(ssoDist, ssoPort)];
    children.push(...previews.map((p) => p.child));
    await Promise.all(previews.map((p) => p.ready));

    return Object.assign(stack, { api, app, ssoApp, idp, token, demo, logs: () => served.stderr });
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

// A customer of the demo with a year of purchases, the one the README
// names (the demo's year is played from a fixed seed).
export const customer = { name: "Mariana Martins Freitas", cpf: "510.012.327-39" };

let receipts = 0;

// postSale registers a sale of customer at the demo's store LOJA-01 over the
// POS interface (HTTP Basic, the POS client the demo printed) and answers
// its receipt number once the API accepted it (202).
export async function postSale(stack, customer) {
  const receipt = (Date.now() % 1_000_000_000) * 10 + (receipts++ % 10);
  const { client_id: id, client_secret: secret } = stack.demo.pos_client;
  const r = await fetch(`${stack.api}/api/v1/tenants/${stack.demo.tenant_id}/sales`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({
      protocol: "PARTNER_V1",
      customer: { id: customer.cpf, type: "CPF" },
      sale: {
        id: receipt,
        store: { id: "LOJA-01", posId: "PDV-07", employeeId: "OP-123" },
        channel: "pdv",
        date: new Date().toISOString(),
        amount: 125.8,
        amountPayable: 125.8,
        discountAmount: 0,
        items: [{ id: "1", gtin: "7891000100103", description: "Cafe torrado 500 g", unitPrice: 62.9, quantity: 2 }],
        payments: [{ id: 1, amount: 125.8, method: "CREDIT_CARD" }],
      },
    }),
  });
  if (r.status !== 202) throw new Error(`POST sales: ${r.status} ${await r.text()}`);
  return String(receipt);
}
