import { useEffect } from "react";
import { useQuery } from "urql";
import { graphql } from "./gql";
import { brl, day, when } from "./format";
import { useLiveSales } from "./LiveSales";
import { href } from "./route";
import { Problem } from "./Problem";
import { nodes } from "./connection";

const CustomerPage = graphql(`
  query CustomerPage($id: ID!) {
    node(id: $id) {
      ... on Customer {
        id
        name
        email
        documentMasked
        createdAt
        level
        pointsBalance
        pointsPending
        pointsDebt
        lifetimeValue
        pointsEntries(first: 20, orderBy: { field: CREATED_AT, direction: DESC }) {
          totalCount
          edges {
            node {
              id
              createdAt
              kind
              points
              balanceAfter
              reason
              expiresAt
            }
          }
        }
        sales(first: 20, orderBy: { field: SOLD_AT, direction: DESC }) {
          totalCount
          edges {
            node {
              id
              externalID
              soldAt
              channel
              status
              amountPayable
              discountAmount
              pointsCredited
              store {
                code
                name
              }
            }
          }
        }
        redemptions(first: 20, orderBy: { field: CREATED_AT, direction: DESC }) {
          totalCount
          edges {
            node {
              id
              createdAt
              orderID
              storeCode
              discountAmount
              cashbackAmount
              bonusPoints
              rolledBackAt
              campaign {
                id
                name
              }
            }
          }
        }
      }
    }
  }
`);

// Customer is a customer's page: level, points, the latest ledger entries,
// sales and redemptions. It reads the page again when the live feed brings
// one of the customer's sales.
export function Customer({ id }: { id: string }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: CustomerPage, variables: { id } });
  const { sales } = useLiveSales();
  const latest = sales[0];
  useEffect(() => {
    if (latest?.customerID === id) refetch({ requestPolicy: "network-only" });
  }, [latest, id, refetch]);

  const c = data?.node?.__typename === "Customer" ? data.node : null;
  if (!c) {
    return (
      <section>
        <Problem error={error} />
        {fetching ? <p className="muted">Loading…</p> : !error && <p>No customer {id}.</p>}
      </section>
    );
  }
  return (
    <section>
      <p>
        <a href={href({ page: "customers", search: "" })}>← Customers</a>
      </p>
      <h1>{c.name || "(pre-registered)"}</h1>
      <p className="muted">
        {c.email} · {c.documentMasked} · customer since {day(c.createdAt)}
      </p>
      <dl className="cards">
        <div>
          <dt>Level</dt>
          <dd>
            <span className={`level ${c.level}`} data-testid="level">
              {c.level}
            </span>
          </dd>
        </div>
        <div>
          <dt>Points balance</dt>
          <dd data-testid="points-balance">{c.pointsBalance}</dd>
        </div>
        <div>
          <dt>Pending</dt>
          <dd>{c.pointsPending}</dd>
        </div>
        <div>
          <dt>Owed</dt>
          <dd>{c.pointsDebt}</dd>
        </div>
        <div>
          <dt>Lifetime value</dt>
          <dd>{brl(c.lifetimeValue)}</dd>
        </div>
      </dl>

      <h2>Points ledger ({c.pointsEntries.totalCount})</h2>
      <table>
        <thead>
          <tr>
            <th>When</th>
            <th>Kind</th>
            <th className="num">Points</th>
            <th className="num">Balance after</th>
            <th>Why</th>
          </tr>
        </thead>
        <tbody>
          {nodes(c.pointsEntries).map((p) => (
            <tr key={p.id}>
              <td>{when(p.createdAt)}</td>
              <td>{p.kind}</td>
              <td className="num">{p.points > 0 ? `+${p.points}` : p.points}</td>
              <td className="num">{p.balanceAfter}</td>
              <td>
                {p.reason}
                {p.expiresAt && <span className="muted"> (expires {day(p.expiresAt)})</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Sales ({c.sales.totalCount})</h2>
      <table data-testid="sales">
        <thead>
          <tr>
            <th>Sold</th>
            <th>Receipt</th>
            <th>Store</th>
            <th>Status</th>
            <th className="num">Paid</th>
            <th className="num">Discount</th>
            <th className="num">Points</th>
          </tr>
        </thead>
        <tbody>
          {nodes(c.sales).map((s) => (
            <tr key={s.id}>
              <td>{when(s.soldAt)}</td>
              <td>{s.externalID}</td>
              <td>{s.store.name}</td>
              <td>{s.status}</td>
              <td className="num">{brl(s.amountPayable)}</td>
              <td className="num">{brl(s.discountAmount)}</td>
              <td className="num">{s.pointsCredited}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Redemptions ({c.redemptions.totalCount})</h2>
      <table>
        <thead>
          <tr>
            <th>When</th>
            <th>Campaign</th>
            <th>Order</th>
            <th className="num">Discount</th>
            <th className="num">Cashback</th>
            <th className="num">Bonus points</th>
          </tr>
        </thead>
        <tbody>
          {nodes(c.redemptions).map((r) => (
            <tr key={r.id} className={r.rolledBackAt ? "rolled-back" : undefined}>
              <td>{when(r.createdAt)}</td>
              <td>
                <a href={href({ page: "campaign", id: r.campaign.id })}>{r.campaign.name}</a>
              </td>
              <td>
                {r.orderID}
                {r.rolledBackAt && <span className="muted"> (rolled back)</span>}
              </td>
              <td className="num">{brl(r.discountAmount)}</td>
              <td className="num">{brl(r.cashbackAmount)}</td>
              <td className="num">{r.bonusPoints}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
