// The reference app tested as a person would use it, against `fideliza
// serve --demo`: a browser on the app's own origin (Debian's Chromium driven
// by playwright-core), and the graphql-ws npm client on the subscription.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chromium } from "playwright-core";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { bruno, postSale, startStack } from "./harness.mjs";

// How long a processed sale may take to reach the live feed (issue 39),
// counted from the moment the POS sends it.
const feedBound = 2_000;

let stack;

before(async () => {
  stack = await startStack();
});

after(async () => {
  await stack?.stop();
});

describe("the back-office app in Chromium", () => {
  test("signs in, finds a demo customer, and sees a POS sale in the live feed", async (t) => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: ["--no-sandbox"],
    });
    t.after(() => browser.close());
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const problems = [];
    // A failed load is logged twice: as the response, with its URL, and on the console.
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(`console: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page: ${e.message}`));
    page.on("response", (r) => r.status() >= 400 && problems.push(`${r.status()}: ${r.url()}`));
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    // The origins the API's answers allowed (Access-Control-Allow-Origin).
    const allowed = new Set();
    page.on("response", (r) => r.url().startsWith(stack.api) && allowed.add(r.headers()["access-control-allow-origin"]));

    await page.goto(stack.app);
    await page.getByLabel("API base URL").fill(stack.api);
    // A token the API refuses: its 401 is readable across origins, and said.
    await page.getByLabel("User token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "The API refused the token" }).waitFor();
    problems.length = 0; // that 401 was expected

    await page.getByLabel("User token").fill(stack.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("link-state").filter({ hasText: /^live$/ }).waitFor();

    await page.getByLabel("Name, e-mail or external id").fill(bruno.name);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: bruno.name, exact: true }).click();
    await page.getByRole("heading", { level: 1, name: bruno.name }).waitFor();
    const balance = Number(await page.getByTestId("points-balance").textContent());
    await page.getByTestId("level").waitFor();

    const sent = performance.now();
    const receipt = await postSale(stack, bruno);
    const row = page.getByTestId("live-sales").locator(`li[data-receipt="${receipt}"]`);
    await row.waitFor({ timeout: feedBound + 5_000 });
    const took = performance.now() - sent;
    t.diagnostic(`the sale reached the live feed ${Math.round(took)} ms after the POS sent it`);
    assert.ok(took <= feedBound, `the sale took ${Math.round(took)} ms to reach the feed, over ${feedBound} ms`);
    assert.match(await row.textContent(), /R\$ 125,80 at LOJA-01/);

    // The customer's page reads itself again on their sale: the points grow.
    await page.waitForFunction(
      (before) => Number(document.querySelector('[data-testid="points-balance"]')?.textContent) > before,
      balance,
    );
    await page.getByTestId("sales").getByRole("cell", { name: receipt, exact: true }).waitFor();

    // A campaign's performance: one of the year's campaigns brought orders.
    await page.getByRole("link", { name: "Campaigns", exact: true }).click();
    await page.getByRole("link", { name: "R$ 20 em compras acima de R$ 200" }).click();
    const results = page.getByTestId("performance");
    await results.getByText("Revenue of its orders").waitFor();
    const redemptions = Number(await results.locator("dd").first().textContent());
    assert.ok(redemptions > 0, `redemptions of the campaign: ${redemptions}`);
    await page.getByRole("button", { name: "Last 7 days" }).click();
    await page.getByRole("button", { name: "Last 7 days", pressed: true }).waitFor();

    assert.deepEqual([...allowed], [stack.app], "every answer of the API is for the app's origin, by CORS");
    assert.deepEqual(problems, []);
  });
});

describe("the graphql-ws client", () => {
  const url = () => `${stack.api.replace(/^http/, "ws")}/graphql/ws`;

  test("receives salesProcessed after a POS sale", async (t) => {
    let connected;
    const ready = new Promise((resolve) => (connected = resolve));
    const client = createClient({
      url: url(),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${stack.token}` },
      retryAttempts: 0,
      on: { connected },
    });
    t.after(() => client.dispose());
    const events = client.iterate({ query: "subscription { salesProcessed { id type subjectID data } }" });
    await ready;

    const receipt = await postSale(stack, bruno);
    for await (const r of events) {
      assert.equal(r.errors, undefined);
      const e = r.data.salesProcessed;
      if (e.data.receipt !== receipt) continue; // another test's sale
      assert.equal(e.type, "sale.processed");
      assert.equal(e.data.store_code, "LOJA-01");
      assert.equal(e.data.amount_payable, "125.8");
      assert.match(e.data.customer_id, /^cus_/);
      assert.ok(e.data.points_credited > 0, `points credited: ${e.data.points_credited}`);
      break;
    }
  });

  test("is refused with 4403 for a token the API did not sign", async () => {
    const client = createClient({
      url: url(),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: "Bearer not-a-token" },
      retryAttempts: 0,
    });
    try {
      const events = client.iterate({ query: "subscription { salesProcessed { id } }" });
      await assert.rejects(events.next(), (e) => e?.code === 4403);
    } finally {
      await client.dispose();
    }
  });
});
