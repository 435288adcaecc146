import { useMemo, useState } from "react";
import { useQuery } from "urql";
import { graphql } from "./gql";
import { brl } from "./format";
import { compare, share, sum } from "./decimal";
import { Problem } from "./Problem";

const SalesByStore = graphql(`
  query SalesByStore($from: Time!, $to: Time!) {
    salesByStoreDay(from: $from, to: $to) {
      day
      sales
      amountPayable
      store {
        code
        name
      }
    }
  }
`);

// The periods the dashboard sums, in days back from now (at most 366, the
// query's bound).
const periods = [7, 30, 90, 365];

interface StoreTotal {
  code: string;
  name: string;
  sales: number;
  amount: string; // R$ payable, exact
}

// byStore adds up a period's days per store, the largest amount first.
function byStore(rows: readonly { sales: number; amountPayable: string; store: { code: string; name: string } }[]) {
  const stores = new Map<string, { name: string; sales: number; amounts: string[] }>();
  for (const r of rows) {
    const s = stores.get(r.store.code) ?? { name: r.store.name, sales: 0, amounts: [] };
    s.sales += r.sales;
    s.amounts.push(r.amountPayable);
    stores.set(r.store.code, s);
  }
  const totals: StoreTotal[] = [...stores].map(([code, s]) => ({ code, name: s.name, sales: s.sales, amount: sum(s.amounts) }));
  return totals.sort((a, b) => compare(b.amount, a.amount) || a.code.localeCompare(b.code));
}

// Dashboard charts the sales of each store over a period
// (salesByStoreDay, days in the tenant's time zone).
export function Dashboard() {
  const [days, setDays] = useState(30);
  const variables = useMemo(() => {
    const to = new Date();
    return { from: new Date(to.getTime() - days * 86_400_000).toISOString(), to: to.toISOString() };
  }, [days]);
  const [{ data, fetching, error }] = useQuery({ query: SalesByStore, variables });
  const stores = data ? byStore(data.salesByStoreDay) : [];
  return (
    <section>
      <h1>Dashboard</h1>
      <div className="periods" role="group" aria-label="Period">
        {periods.map((d) => (
          <button key={d} aria-pressed={days === d} onClick={() => setDays(d)}>
            Last {d} days
          </button>
        ))}
      </div>
      <Problem error={error} />
      {fetching && <p className="muted">Loading…</p>}
      {data && !fetching && (
        <>
          <h2>Sales by store</h2>
          {stores.length === 0 ? (
            <p className="muted">No sales in the period.</p>
          ) : (
            <>
              <StoreChart stores={stores} />
              <table data-testid="sales-by-store">
                <thead>
                  <tr>
                    <th>Store</th>
                    <th className="num">Sales</th>
                    <th className="num">Payable</th>
                  </tr>
                </thead>
                <tbody>
                  {stores.map((s) => (
                    <tr key={s.code}>
                      <td>
                        {s.code} <span className="muted">{s.name}</span>
                      </td>
                      <td className="num">{s.sales}</td>
                      <td className="num">{brl(s.amount)}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th>Every store</th>
                    <th className="num">{stores.reduce((n, s) => n + s.sales, 0)}</th>
                    <th className="num">{brl(sum(stores.map((s) => s.amount)))}</th>
                  </tr>
                </tfoot>
              </table>
            </>
          )}
        </>
      )}
    </section>
  );
}

// StoreChart is a horizontal bar per store, its length the store's amount
// against the largest one's; plain SVG.
function StoreChart({ stores }: { stores: StoreTotal[] }) {
  const row = 26;
  const [label, bar] = [90, 380];
  const top = stores[0].amount;
  return (
    <svg
      className="chart"
      role="img"
      aria-label="Amount payable by store"
      viewBox={`0 0 ${label + bar + 130} ${stores.length * row}`}
      width="100%"
    >
      {stores.map((s, i) => {
        const width = Math.max(1, share(s.amount, top) * bar);
        return (
          <g key={s.code} data-store={s.code} transform={`translate(0 ${i * row})`}>
            <title>{`${s.code} ${s.name}: ${brl(s.amount)} in ${s.sales} sales`}</title>
            <text x={0} y={row / 2} dominantBaseline="middle">
              {s.code}
            </text>
            <rect x={label} y={4} width={width} height={row - 8} rx={3} />
            <text x={label + width + 6} y={row / 2} dominantBaseline="middle" className="value">
              {brl(s.amount)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
