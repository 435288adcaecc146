import { useState, type FormEvent } from "react";
import { useQuery } from "urql";
import { graphql } from "./gql";
import { brl } from "./format";
import { href } from "./route";
import { Problem } from "./Problem";
import { nodes } from "./connection";

const CustomerSearch = graphql(`
  query CustomerSearch($search: String, $after: Cursor) {
    customerSearch(search: $search, first: 20, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          name
          email
          level
          pointsBalance
          lifetimeValue
        }
      }
    }
  }
`);

// Customers searches the tenant's customers by name (word prefixes, accents
// and case ignored), whole e-mail or external id, newest first. GraphQL filters take no
// document: a CPF lookup is customerByDocument's, counted and audited.
export function Customers({ search }: { search: string }) {
  const [text, setText] = useState(search);
  const [after, setAfter] = useState<string[]>([]);
  const [{ data, fetching, error }] = useQuery({
    query: CustomerSearch,
    variables: { search: search || null, after: after.at(-1) ?? null },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    setAfter([]);
    location.hash = href({ page: "customers", search: text.trim() });
  }

  const page = data?.customerSearch;
  return (
    <section>
      <h1>Customers</h1>
      <form className="search" onSubmit={submit} role="search">
        <input
          aria-label="Name, e-mail or external id"
          placeholder="Name, e-mail or external id"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit">Search</button>
      </form>
      <Problem error={error} />
      {fetching && <p className="muted">Loading…</p>}
      {page && (
        <>
          <p className="muted">{page.totalCount} customers</p>
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>E-mail</th>
                <th>Level</th>
                <th className="num">Points</th>
                <th className="num">Lifetime value</th>
              </tr>
            </thead>
            <tbody>
              {nodes(page).map((c) => (
                <tr key={c.id}>
                  <td>
                    <a href={href({ page: "customer", id: c.id })}>{c.name || "(pre-registered)"}</a>
                  </td>
                  <td>{c.email}</td>
                  <td>
                    <span className={`level ${c.level}`}>{c.level}</span>
                  </td>
                  <td className="num">{c.pointsBalance}</td>
                  <td className="num">{brl(c.lifetimeValue)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="pager">
            <button disabled={after.length === 0} onClick={() => setAfter(after.slice(0, -1))}>
              Previous
            </button>
            <button
              disabled={!page.pageInfo.hasNextPage}
              onClick={() => page.pageInfo.endCursor && setAfter([...after, page.pageInfo.endCursor])}
            >
              Next
            </button>
          </div>
        </>
      )}
    </section>
  );
}
