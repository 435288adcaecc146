import { useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import { graphql } from "./gql";
import type { CampaignDiscountMode, CampaignType, CreateCampaignInput } from "./gql/graphql";
import { href } from "./route";
import { Problem } from "./Problem";
import { Field } from "./Field";
import { nodes } from "./connection";

const CampaignOptions = graphql(`
  query CampaignOptions($from: ID!, $copy: Boolean!) {
    stores(first: 100, orderBy: { field: CODE, direction: ASC }) {
      edges {
        node {
          id
          code
          name
        }
      }
    }
    segments(first: 100, orderBy: { field: NAME, direction: ASC }) {
      edges {
        node {
          id
          name
        }
      }
    }
    node(id: $from) @include(if: $copy) {
      ... on Campaign {
        name
        description
        type
        segmentID
        channels
        storeCodes
        discountMode
        discountValue
        creditAfterDays
        multiplier
        giftSku
        minSubtotal
        limitPerCustomer
        limitTotal
        budgetTotal
      }
    }
  }
`);

const CreateCampaign = graphql(`
  mutation CreateCampaign($input: CreateCampaignInput!) {
    createCampaign(input: $input) {
      id
      status
    }
  }
`);

const types: { value: CampaignType; label: string }[] = [
  { value: "discount", label: "Discount" },
  { value: "cashback", label: "Cashback" },
  { value: "bonus_points", label: "Bonus points" },
  { value: "gift", label: "Gift" },
];
const modes: { value: CampaignDiscountMode; label: string }[] = [
  { value: "percentage", label: "Percentage of the items" },
  { value: "fixed_amount", label: "Fixed amount (R$)" },
  { value: "free_shipping", label: "Free shipping" },
];
const channels = ["pdv", "ecommerce", "app"];

// A campaign being written: what the form's inputs hold.
interface Draft {
  name: string;
  description: string;
  type: CampaignType;
  startsAt: string; // datetime-local, the browser's time zone
  endsAt: string;
  segmentID: string;
  channels: string[]; // none: every channel
  storeCodes: string[]; // none: every store
  discountMode: CampaignDiscountMode;
  discountValue: string;
  creditAfterDays: string;
  multiplier: string;
  giftSku: string;
  minSubtotal: string;
  limitPerCustomer: string;
  limitTotal: string;
  budgetTotal: string;
}

// localInput is an instant as a datetime-local input shows it.
function localInput(t: Date): string {
  const local = new Date(t.getTime() - t.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

// Copy is what a new campaign takes from the campaign it copies.
interface Copy {
  name: string;
  description: string;
  type: CampaignType;
  segmentID?: string | null;
  channels?: readonly string[] | null;
  storeCodes?: readonly string[] | null;
  discountMode?: CampaignDiscountMode | null;
  discountValue?: string | null;
  creditAfterDays?: number | null;
  multiplier?: string | null;
  giftSku?: string | null;
  minSubtotal?: string | null;
  limitPerCustomer?: number | null;
  limitTotal?: number | null;
  budgetTotal?: string | null;
}

// draft is a new campaign from this minute for 30 days, with the settings of the
// campaign it copies, if any.
function draft(c: Copy | null): Draft {
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const text = (v: string | number | null | undefined) => (v === null || v === undefined ? "" : String(v));
  return {
    name: c ? `${c.name} (copy)` : "",
    description: c?.description ?? "",
    type: c?.type ?? "discount",
    startsAt: localInput(start),
    endsAt: localInput(new Date(start.getTime() + 30 * 86_400_000)),
    segmentID: text(c?.segmentID),
    channels: [...(c?.channels ?? [])],
    storeCodes: [...(c?.storeCodes ?? [])],
    discountMode: c?.discountMode ?? "percentage",
    discountValue: text(c?.discountValue),
    creditAfterDays: text(c?.creditAfterDays),
    multiplier: text(c?.multiplier),
    giftSku: text(c?.giftSku),
    minSubtotal: text(c?.minSubtotal),
    limitPerCustomer: text(c?.limitPerCustomer),
    limitTotal: text(c?.limitTotal),
    budgetTotal: text(c?.budgetTotal),
  };
}

// input is what createCampaign takes: empty fields and those of other
// campaign types left out, for the API to judge the rest.
function input(d: Draft): CreateCampaignInput {
  const given = (v: string) => (v.trim() === "" ? undefined : v.trim());
  const int = (v: string) => (v.trim() === "" ? undefined : Number(v));
  const money = d.type === "discount" || d.type === "cashback";
  return {
    name: d.name.trim(),
    description: given(d.description),
    type: d.type,
    startsAt: new Date(d.startsAt).toISOString(),
    endsAt: new Date(d.endsAt).toISOString(),
    segmentID: given(d.segmentID),
    channels: d.channels.length > 0 ? d.channels : undefined,
    storeCodes: d.storeCodes.length > 0 ? d.storeCodes : undefined,
    discountMode: money ? d.discountMode : undefined,
    discountValue: money && d.discountMode !== "free_shipping" ? given(d.discountValue) : undefined,
    creditAfterDays: d.type === "cashback" ? int(d.creditAfterDays) : undefined,
    multiplier: d.type === "bonus_points" ? given(d.multiplier) : undefined,
    giftSku: d.type === "gift" ? given(d.giftSku) : undefined,
    minSubtotal: given(d.minSubtotal),
    limitPerCustomer: int(d.limitPerCustomer),
    limitTotal: int(d.limitTotal),
    budgetTotal: money ? given(d.budgetTotal) : undefined,
  };
}

// NewCampaign creates a campaign, blank or copied from another one (the
// API changes a campaign only by pausing, resuming or ending it).
export function NewCampaign({ from }: { from: string }) {
  const [{ data, error }] = useQuery({ query: CampaignOptions, variables: { from, copy: from !== "" } });
  if (error) return <Problem error={error} />;
  if (!data) return <p className="muted">Loading…</p>;
  const copied = data.node?.__typename === "Campaign" ? data.node : null;
  return (
    <CampaignEditor
      key={from}
      initial={draft(copied)}
      copiedFrom={copied?.name ?? ""}
      stores={nodes(data.stores)}
      segments={nodes(data.segments)}
    />
  );
}

function CampaignEditor(props: {
  initial: Draft;
  copiedFrom: string;
  stores: { code: string; name: string }[];
  segments: { id: string; name: string }[];
}) {
  const [d, setD] = useState(props.initial);
  const [result, create] = useMutation(CreateCampaign);
  const set = <K extends keyof Draft>(k: K) => (v: Draft[K]) => setD({ ...d, [k]: v });
  const toggle = (k: "channels" | "storeCodes", v: string) =>
    setD({ ...d, [k]: d[k].includes(v) ? d[k].filter((x) => x !== v) : [...d[k], v] });

  async function submit(e: FormEvent) {
    e.preventDefault();
    const r = await create({ input: input(d) });
    if (r.data) location.hash = href({ page: "campaign", id: r.data.createCampaign.id });
  }

  const money = d.type === "discount" || d.type === "cashback";
  return (
    <section>
      <p>
        <a href={href({ page: "campaigns" })}>← Campaigns</a>
      </p>
      <h1>New campaign</h1>
      {props.copiedFrom && <p className="muted">A copy of {props.copiedFrom}, to start anew.</p>}
      <form className="editor" onSubmit={submit}>
        <Field label="Name">
          <input value={d.name} onChange={(e) => set("name")(e.target.value)} required maxLength={200} />
        </Field>
        <Field label="Description">
          <textarea value={d.description} onChange={(e) => set("description")(e.target.value)} rows={2} />
        </Field>
        <Field label="Type">
          <select value={d.type} onChange={(e) => set("type")(e.target.value as CampaignType)}>
            {types.map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Starts">
          <input type="datetime-local" value={d.startsAt} onChange={(e) => set("startsAt")(e.target.value)} required />
        </Field>
        <Field label="Ends">
          <input type="datetime-local" value={d.endsAt} onChange={(e) => set("endsAt")(e.target.value)} required />
        </Field>
        {money && (
          <Field label="Discount mode">
            <select value={d.discountMode} onChange={(e) => set("discountMode")(e.target.value as CampaignDiscountMode)}>
              {modes
                .filter((m) => d.type === "discount" || m.value !== "free_shipping")
                .map((m) => (
                  <option key={m.value} value={m.value}>
                    {m.label}
                  </option>
                ))}
            </select>
          </Field>
        )}
        {money && d.discountMode !== "free_shipping" && (
          <Field label={d.discountMode === "percentage" ? "Value (%)" : "Value (R$)"}>
            <input inputMode="decimal" value={d.discountValue} onChange={(e) => set("discountValue")(e.target.value)} />
          </Field>
        )}
        {d.type === "cashback" && (
          <Field label="Cashback after (days)">
            <input type="number" min={0} value={d.creditAfterDays} onChange={(e) => set("creditAfterDays")(e.target.value)} />
          </Field>
        )}
        {d.type === "bonus_points" && (
          <Field label="Points multiplier">
            <input inputMode="decimal" value={d.multiplier} onChange={(e) => set("multiplier")(e.target.value)} />
          </Field>
        )}
        {d.type === "gift" && (
          <Field label="Gift SKU">
            <input value={d.giftSku} onChange={(e) => set("giftSku")(e.target.value)} />
          </Field>
        )}
        <Field label="Minimum subtotal (R$)">
          <input inputMode="decimal" value={d.minSubtotal} onChange={(e) => set("minSubtotal")(e.target.value)} />
        </Field>
        <Field label="Segment">
          <select value={d.segmentID} onChange={(e) => set("segmentID")(e.target.value)}>
            <option value="">Every customer</option>
            {props.segments.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </Field>
        <fieldset>
          <legend>Channels (none: every channel)</legend>
          {channels.map((c) => (
            <label key={c} className="check">
              <input type="checkbox" checked={d.channels.includes(c)} onChange={() => toggle("channels", c)} /> {c}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Stores (none: every store)</legend>
          {props.stores.map((s) => (
            <label key={s.code} className="check" title={s.name}>
              <input type="checkbox" checked={d.storeCodes.includes(s.code)} onChange={() => toggle("storeCodes", s.code)} />{" "}
              {s.code}
            </label>
          ))}
        </fieldset>
        <Field label="Redemptions per customer">
          <input type="number" min={1} value={d.limitPerCustomer} onChange={(e) => set("limitPerCustomer")(e.target.value)} />
        </Field>
        <Field label="Redemptions in all">
          <input type="number" min={1} value={d.limitTotal} onChange={(e) => set("limitTotal")(e.target.value)} />
        </Field>
        {money && (
          <Field label="Budget (R$)">
            <input inputMode="decimal" value={d.budgetTotal} onChange={(e) => set("budgetTotal")(e.target.value)} />
          </Field>
        )}
        <Problem error={result.error} />
        <div>
          <button type="submit" disabled={result.fetching}>
            Create campaign
          </button>
        </div>
      </form>
    </section>
  );
}
