import { useMemo, useState } from "react";
import { useMutation, useQuery } from "urql";
import { graphql } from "./gql";
import { brl, day } from "./format";
import { href } from "./route";
import { Problem } from "./Problem";
import { nodes } from "./connection";

const CampaignList = graphql(`
  query CampaignList {
    campaigns(first: 100, orderBy: { field: STARTS_AT, direction: DESC }) {
      totalCount
      edges {
        node {
          id
          name
          type
          status
          startsAt
          endsAt
          redemptionsCount
        }
      }
    }
  }
`);

const CampaignPage = graphql(`
  query CampaignPage($id: ID!, $from: Time, $to: Time) {
    node(id: $id) {
      ... on Campaign {
        id
        name
        description
        type
        status
        startsAt
        endsAt
        channels
        storeCodes
        storeGroups
        budgetTotal
        budgetSpent
        redemptionsCount
        segment {
          name
        }
        performance(from: $from, to: $to) {
          redemptions
          discountGiven
          cashbackPromised
          revenue
        }
      }
    }
  }
`);

const PauseCampaign = graphql(`
  mutation PauseCampaign($id: ID!) {
    pauseCampaign(id: $id) {
      id
      status
    }
  }
`);

const ResumeCampaign = graphql(`
  mutation ResumeCampaign($id: ID!) {
    resumeCampaign(id: $id) {
      id
      status
    }
  }
`);

const EndCampaign = graphql(`
  mutation EndCampaign($id: ID!) {
    endCampaign(id: $id) {
      id
      status
    }
  }
`);

// Campaigns lists the tenant's campaigns, latest start first.
export function Campaigns() {
  const [{ data, fetching, error }] = useQuery({ query: CampaignList });
  return (
    <section>
      <h1>Campaigns</h1>
      <p>
        <a className="button" href={href({ page: "campaign-new", from: "" })}>
          New campaign
        </a>
      </p>
      <Problem error={error} />
      {fetching && <p className="muted">Loading…</p>}
      {data && (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>Status</th>
              <th>Runs</th>
              <th className="num">Redemptions</th>
            </tr>
          </thead>
          <tbody>
            {nodes(data.campaigns).map((c) => (
              <tr key={c.id}>
                <td>
                  <a href={href({ page: "campaign", id: c.id })}>{c.name}</a>
                </td>
                <td>{c.type}</td>
                <td>
                  <span className={`status ${c.status}`}>{c.status}</span>
                </td>
                <td>
                  {day(c.startsAt)} – {day(c.endsAt)}
                </td>
                <td className="num">{c.redemptionsCount}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

// The periods a campaign's performance is shown for, in days (0: all time).
const periods = [
  { days: 0, label: "All time" },
  { days: 7, label: "Last 7 days" },
  { days: 30, label: "Last 30 days" },
  { days: 365, label: "Last 12 months" },
];

// Campaign is a campaign's performance over a period: redemptions,
// discount given, cashback promised and the revenue of its orders.
export function Campaign({ id }: { id: string }) {
  const [days, setDays] = useState(0);
  const variables = useMemo(() => {
    if (days === 0) return { id, from: null, to: null };
    const to = new Date();
    return { id, from: new Date(to.getTime() - days * 86_400_000).toISOString(), to: to.toISOString() };
  }, [id, days]);
  const [{ data, fetching, error }] = useQuery({ query: CampaignPage, variables });
  const c = data?.node?.__typename === "Campaign" ? data.node : null;
  return (
    <section>
      <p>
        <a href={href({ page: "campaigns" })}>← Campaigns</a>
      </p>
      <Problem error={error} />
      {!c && fetching && <p className="muted">Loading…</p>}
      {c && (
        <>
          <h1>{c.name}</h1>
          <p className="muted">
            {c.type} · <span className={`status ${c.status}`}>{c.status}</span> · {day(c.startsAt)} –{" "}
            {day(c.endsAt)} · {c.segment ? `segment ${c.segment.name}` : "every customer"}
            {c.channels && ` · ${c.channels.join(", ")}`}
            {c.storeCodes && ` · stores ${c.storeCodes.join(", ")}`}
            {c.storeGroups && ` · regions ${c.storeGroups.join(", ")}`}
          </p>
          {c.description && <p>{c.description}</p>}
          <Actions id={c.id} status={c.status} />
          <div className="periods" role="group" aria-label="Period">
            {periods.map((p) => (
              <button key={p.days} aria-pressed={days === p.days} onClick={() => setDays(p.days)}>
                {p.label}
              </button>
            ))}
          </div>
          <dl className="cards" data-testid="performance">
            <div>
              <dt>Redemptions</dt>
              <dd>{c.performance.redemptions}</dd>
            </div>
            <div>
              <dt>Discount given</dt>
              <dd>{brl(c.performance.discountGiven)}</dd>
            </div>
            <div>
              <dt>Cashback promised</dt>
              <dd>{brl(c.performance.cashbackPromised)}</dd>
            </div>
            <div>
              <dt>Revenue of its orders</dt>
              <dd>{brl(c.performance.revenue)}</dd>
            </div>
            {c.budgetTotal && (
              <div>
                <dt>Budget spent</dt>
                <dd>
                  {brl(c.budgetSpent ?? "0")} of {brl(c.budgetTotal)}
                </dd>
              </div>
            )}
          </dl>
        </>
      )}
    </section>
  );
}

// Actions change a campaign's status: pause and resume it, or end it for
// good; a copy starts a new campaign from its settings.
function Actions({ id, status }: { id: string; status: string }) {
  const [pausing, pause] = useMutation(PauseCampaign);
  const [resuming, resume] = useMutation(ResumeCampaign);
  const [ending, end] = useMutation(EndCampaign);
  const busy = pausing.fetching || resuming.fetching || ending.fetching;
  return (
    <div className="actions">
      {(status === "active" || status === "scheduled") && (
        <button disabled={busy} onClick={() => void pause({ id })}>
          Pause
        </button>
      )}
      {status === "paused" && (
        <button disabled={busy} onClick={() => void resume({ id })}>
          Resume
        </button>
      )}
      {status !== "ended" && (
        <button
          className="danger"
          disabled={busy}
          onClick={() => confirm("End this campaign for good? It cannot be resumed.") && void end({ id })}
        >
          End
        </button>
      )}
      <a href={href({ page: "campaign-new", from: id })}>Copy into a new campaign</a>
      <Problem error={pausing.error ?? resuming.error ?? ending.error} />
    </div>
  );
}
