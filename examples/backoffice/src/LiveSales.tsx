import { createContext, useContext, useMemo, type ReactNode } from "react";
import { useSubscription } from "urql";
import { graphql } from "./gql";
import type { LinkState } from "./client";
import { brl, when } from "./format";
import { href } from "./route";

const SalesProcessed = graphql(`
  subscription SalesProcessed {
    salesProcessed {
      id
      createdAt
      subjectID
      data
    }
  }
`);

// A processed sale as the sale.processed event tells it.
export interface LiveSale {
  eventID: string;
  at: string;
  saleID: string;
  receipt: string;
  storeCode: string;
  customerID: string | null;
  amountPayable: string;
  pointsCredited: number;
}

// How many sales the feed keeps.
const kept = 50;

interface Live {
  sales: LiveSale[];
  error?: string;
}

const LiveContext = createContext<Live>({ sales: [] });

// useLiveSales is the feed's sales, newest first, and the subscription's
// error if it ended with one.
export function useLiveSales(): Live {
  return useContext(LiveContext);
}

// LiveSalesProvider subscribes to salesProcessed for as long as the user is
// signed in, so pages can react to a sale (a customer's balance changes).
export function LiveSalesProvider({ children }: { children: ReactNode }) {
  const [{ data: sales, error }] = useSubscription({ query: SalesProcessed }, (prev: LiveSale[] = [], d) => {
    const e = d.salesProcessed;
    const v = e.data as Record<string, unknown>;
    const sale: LiveSale = {
      eventID: e.id,
      at: e.createdAt,
      saleID: String(v.sale_id ?? e.subjectID),
      receipt: String(v.receipt ?? ""),
      storeCode: String(v.store_code ?? ""),
      customerID: typeof v.customer_id === "string" ? v.customer_id : null,
      amountPayable: String(v.amount_payable ?? "0"),
      pointsCredited: Number(v.points_credited ?? 0),
    };
    return [sale, ...prev].slice(0, kept);
  });
  const live = useMemo(() => ({ sales: sales ?? [], error: error?.message }), [sales, error]);
  return <LiveContext.Provider value={live}>{children}</LiveContext.Provider>;
}

const linkLabel: Record<LinkState, string> = { connecting: "connecting…", live: "live", closed: "disconnected" };

// LiveFeed lists the sales processed since sign-in.
export function LiveFeed({ link }: { link: LinkState }) {
  const { sales, error } = useLiveSales();
  return (
    <aside className="live" aria-labelledby="live-title">
      <h2 id="live-title">
        Live sales <span className={`link ${link}`} data-testid="link-state">{linkLabel[link]}</span>
      </h2>
      {error && <p className="error" role="alert">{error}</p>}
      {sales.length === 0 && <p className="muted">Sales appear here as they are processed.</p>}
      <ol data-testid="live-sales">
        {sales.map((s) => (
          <li key={s.eventID} data-receipt={s.receipt}>
            <strong>{brl(s.amountPayable)}</strong> at {s.storeCode}, receipt {s.receipt}
            <br />
            <span className="muted">
              {when(s.at)} · +{s.pointsCredited} points
              {s.customerID && (
                <>
                  {" · "}
                  <a href={href({ page: "customer", id: s.customerID })}>customer</a>
                </>
              )}
            </span>
          </li>
        ))}
      </ol>
    </aside>
  );
}
