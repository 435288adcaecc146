// The reference app tested as a person would use it, against `fideliza
// serve --demo`: a browser on the app's own origin (Debian's Chromium driven
// by playwright-core), and the graphql-ws npm client on the subscription.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chromium } from "playwright-core";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { customer, postSale, startStack } from "./harness.mjs";

// How long a processed sale may take to reach the live feed (issue 39),
// counted from the moment the POS sends it.
const feedBound = 2_000;

let stack;
let browser;

before(async () => {
  stack = await startStack();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox"],
  });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

// open is a new browser tab of its own (its own sessionStorage) at url,
// collecting what went wrong: console errors, page errors, failed requests
// and answers of 400 and above; and the origins the API's answers allowed
// (Access-Control-Allow-Origin).
async function open(t, url) {
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems = [];
  // A failed load is logged twice: as the response, with its URL, and on the console.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page: ${e.message}`));
  page.on("response", (r) => r.status() >= 400 && problems.push(`${r.status()}: ${r.url()}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  const allowed = new Set();
  page.on("response", (r) => r.url().startsWith(stack.api) && allowed.add(r.headers()["access-control-allow-origin"]));
  await page.goto(url);
  return { page, problems, allowed };
}

// signIn signs in on the app with the demo administrator's user token.
async function signIn(page) {
  await page.getByLabel("API base URL").fill(stack.api);
  await page.getByLabel("User token").fill(stack.token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByTestId("link-state").filter({ hasText: /^live$/ }).waitFor();
}

// graphql asks the API directly, as the demo's administrator.
async function graphql(query, variables = {}) {
  const r = await fetch(`${stack.api}/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.token}`, "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const body = await r.json();
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

describe("the back-office app in Chromium", () => {
  test("signs in, finds a demo customer, and sees a POS sale in the live feed", async (t) => {
    const { page, problems, allowed } = await open(t, stack.app);
    // Built without a provider: no SSO.
    assert.equal(await page.getByRole("button", { name: "Sign in with SSO" }).count(), 0);
    await page.getByLabel("API base URL").fill(stack.api);
    // A token the API refuses: its 401 is readable across origins, and said.
    await page.getByLabel("User token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "The API refused the token" }).waitFor();
    problems.length = 0; // that 401 was expected
    await signIn(page);

    await page.getByLabel("Name, e-mail or external id").fill(customer.name);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: customer.name, exact: true }).click();
    await page.getByRole("heading", { level: 1, name: customer.name }).waitFor();
    const balance = Number(await page.getByTestId("points-balance").textContent());
    await page.getByTestId("level").waitFor();
    // The README's customer has a year of activity.
    assert.ok((await page.getByTestId("sales").getByRole("row").count()) > 1, "the customer has sales");

    const sent = performance.now();
    const receipt = await postSale(stack, customer);
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

describe("the back-office app's screens in Chromium", () => {
  test("creates a campaign, pauses, resumes, copies and ends it", async (t) => {
    const { page, problems } = await open(t, stack.app);
    await signIn(page);
    await page.getByRole("link", { name: "Campaigns", exact: true }).click();
    await page.getByRole("link", { name: "New campaign" }).click();

    // The API's refusal is shown with its field.
    const name = `Semana do café ${Date.now()}`;
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Value (%)").fill("15");
    await page.getByLabel("Ends").fill("2020-01-01T00:00");
    await page.getByRole("button", { name: "Create campaign" }).click();
    await page.getByRole("alert").filter({ hasText: "ends_at: must be after starts_at" }).waitFor();

    const ends = new Date(Date.now() + 14 * 86_400_000);
    await page.getByLabel("Ends").fill(`${ends.toISOString().slice(0, 10)}T23:00`);
    await page.getByLabel("Minimum subtotal (R$)").fill("50");
    await page.getByLabel("pdv", { exact: true }).check();
    await page.getByLabel("LOJA-01", { exact: true }).check();
    await page.getByRole("button", { name: "Create campaign" }).click();
    await page.getByRole("heading", { level: 1, name }).waitFor();
    const id = decodeURIComponent(new URL(page.url()).hash.split("/")[2]);
    const status = async () => (await graphql(`query($id: ID!) { node(id: $id) { ... on Campaign { status } } }`, { id })).node.status;
    const shown = (s) => page.locator("section .status").filter({ hasText: new RegExp(`^${s}$`) }).waitFor();
    await shown("active");
    const created = (await graphql(
      `query($id: ID!) { node(id: $id) { ... on Campaign { type discountMode discountValue minSubtotal channels storeCodes } } }`,
      { id },
    )).node;
    assert.deepEqual({ ...created, discountValue: Number(created.discountValue), minSubtotal: Number(created.minSubtotal) }, {
      type: "discount", discountMode: "percentage", discountValue: 15, minSubtotal: 50,
      channels: ["pdv"], storeCodes: ["LOJA-01"],
    });

    await page.getByRole("button", { name: "Pause" }).click();
    await shown("paused");
    assert.equal(await status(), "paused");
    await page.getByRole("button", { name: "Resume" }).click();
    await shown("active");
    assert.equal(await status(), "active");

    // A copy starts a new campaign from its settings.
    await page.getByRole("link", { name: "Copy into a new campaign" }).click();
    await page.getByRole("heading", { level: 1, name: "New campaign" }).waitFor();
    assert.equal(await page.getByLabel("Name", { exact: true }).inputValue(), `${name} (copy)`);
    assert.equal(await page.getByLabel("Value (%)").inputValue(), "15");
    assert.ok(await page.getByLabel("LOJA-01", { exact: true }).isChecked());
    await page.goBack();

    // Ending asks first; an ended campaign has nothing left to do.
    page.once("dialog", (d) => d.accept());
    await page.getByRole("button", { name: "End" }).click();
    await shown("ended");
    assert.equal(await status(), "ended");
    assert.equal(await page.getByRole("button", { name: /^(Pause|Resume|End)$/ }).count(), 0);

    await page.getByRole("link", { name: "← Campaigns" }).click();
    await page.getByRole("link", { name }).waitFor();
    assert.deepEqual(problems, []);
  });

  test("reads and changes the tenant's settings", async (t) => {
    const { page, problems } = await open(t, stack.app);
    await signIn(page);
    await page.getByRole("link", { name: "Settings" }).click();
    const months = page.getByLabel("Points expire after (months)");
    await months.waitFor();
    const read = async () => (await graphql("{ tenants(first: 1) { edges { node { pointsExpiryMonths timeZone } } } }")).tenants.edges[0].node;
    const before = await read();
    assert.equal(await months.inputValue(), String(before.pointsExpiryMonths));
    assert.equal(await page.getByLabel("Time zone").inputValue(), before.timeZone);

    const changed = before.pointsExpiryMonths === 120 ? 119 : before.pointsExpiryMonths + 1;
    await months.fill(String(changed));
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Saved 1 setting." }).waitFor();
    assert.deepEqual(await read(), { ...before, pointsExpiryMonths: changed });
    assert.equal(await months.inputValue(), String(changed));

    await months.fill("0");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("alert").filter({ hasText: "points_expiry_months: must be between 1 and 120" }).waitFor();
    assert.equal((await read()).pointsExpiryMonths, changed);

    await months.fill(String(before.pointsExpiryMonths));
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Saved 1 setting." }).waitFor();
    assert.deepEqual(await read(), before);
    assert.deepEqual(problems, []);
  });

  test("charts the sales by store of a period", async (t) => {
    const { page, problems } = await open(t, stack.app);
    await signIn(page);
    // The period the page asks for, from its own request.
    const asked = page.waitForRequest((r) => r.url() === `${stack.api}/graphql` && r.postDataJSON()?.operationName === "SalesByStore");
    await page.getByRole("link", { name: "Dashboard" }).click();
    const { variables } = (await asked).postDataJSON();
    await page.getByRole("img", { name: "Amount payable by store" }).waitFor();

    // What the API says of that period, added up here exactly (millionths
    // of a real), against what the page shows.
    const units = (decimal) => {
      const [whole, frac = ""] = decimal.split(".");
      return BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, "0"));
    };
    const days = (await graphql(
      "query($from: Time!, $to: Time!) { salesByStoreDay(from: $from, to: $to) { sales amountPayable store { code } } }",
      variables,
    )).salesByStoreDay;
    const want = new Map();
    for (const d of days) {
      const s = want.get(d.store.code) ?? { sales: 0, units: 0n };
      s.sales += d.sales;
      s.units += units(d.amountPayable);
      want.set(d.store.code, s);
    }
    assert.ok(want.size > 1, `stores with sales in the period: ${want.size}`);

    const bars = page.locator("svg.chart g[data-store]");
    assert.equal(await bars.count(), want.size);
    const rows = await page.getByTestId("sales-by-store").locator("tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
    );
    // "R$ 1.234,5" is 1234.5.
    const shown = rows.map(([store, sales, amount]) =>
      [store.split(" ")[0], Number(sales), units(amount.replace(/^R\$ /, "").replaceAll(".", "").replace(",", "."))]);
    const expected = [...want]
      .sort(([ca, a], [cb, b]) => (b.units > a.units ? 1 : b.units < a.units ? -1 : ca.localeCompare(cb)))
      .map(([code, s]) => [code, s.sales, s.units]);
    assert.deepEqual(shown, expected);
    // The longest bar is the first store's.
    const widths = await bars.locator("rect").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("width"))));
    assert.equal(Math.max(...widths), widths[0]);

    await page.getByRole("button", { name: "Last 7 days" }).click();
    await page.getByRole("button", { name: "Last 7 days", pressed: true }).waitFor();
    await page.getByRole("img", { name: "Amount payable by store" }).waitFor();
    assert.deepEqual(problems, []);
  });
});

describe("the back-office app built for an OpenID provider", () => {
  const user = () => ({ sub: "ana@example.com", name: "Ana", tenant_id: stack.demo.tenant_id, role: "analyst" });

  test("signs in with SSO and calls the API with the provider's token", async (t) => {
    stack.idp.signInAs(user());
    const { page, problems, allowed } = await open(t, stack.ssoApp);
    await page.getByLabel("API base URL").fill(stack.api);
    const authorizations = new Set();
    page.on("request", (r) => r.url() === `${stack.api}/graphql` && authorizations.add(r.headers().authorization));
    await page.getByRole("button", { name: "Sign in with SSO" }).click();
    // Back from the provider, signed in, the subscription accepted too.
    await page.getByTestId("link-state").filter({ hasText: /^live$/ }).waitFor();
    assert.equal(new URL(page.url()).search, "", "the code is taken off the address bar");
    await page.locator("header").getByText("Fideliza Demo").waitFor();
    // The provider's access token is opaque: the API refuses it, and the
    // app goes on with the ID token.
    const sent = [...authorizations].filter(Boolean);
    assert.deepEqual(sent.filter((a) => !a.startsWith("Bearer opaque-")), [`Bearer ${stack.idp.issued.at(-1)}`]);

    // An analyst reads, and the API refuses the analyst's writes.
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByLabel("Retailer's name").fill("Renamed");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("alert").filter({ hasText: "insufficient_scope" }).waitFor();
    // The opaque access token's 401 was expected.
    assert.deepEqual(problems.filter((p) => !p.startsWith(`401: ${stack.api}/graphql`)), []);
    assert.deepEqual([...allowed], [stack.ssoApp]);
  });

  test("says why an SSO sign-in fails", async (t) => {
    const { page } = await open(t, stack.ssoApp);
    await page.getByLabel("API base URL").fill(stack.api);

    stack.idp.signInAs(null); // the provider refuses the user
    await page.getByRole("button", { name: "Sign in with SSO" }).click();
    await page.getByRole("alert").filter({ hasText: "The sign-in at the provider failed: access_denied" }).waitFor();
    assert.equal(await page.getByLabel("API base URL").inputValue(), stack.api, "the API chosen comes back");

    stack.idp.signInAs({ ...user(), role: "viewer" }); // a role the API does not know
    await page.getByRole("button", { name: "Sign in with SSO" }).click();
    await page.getByRole("alert").filter({ hasText: "The API refused the provider's token" }).waitFor();
    assert.equal(await page.getByTestId("link-state").count(), 0, "not signed in");
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

    const receipt = await postSale(stack, customer);
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
