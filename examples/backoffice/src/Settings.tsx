import { useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import { graphql } from "./gql";
import type { SettingsFragment, TenantSettingsInput } from "./gql/graphql";
import { Field } from "./Field";
import { Problem } from "./Problem";
import { nodes } from "./connection";

// The settings the screen shows, read and saved.
export const SettingsFields = graphql(`
  fragment Settings on Tenant {
    id
    updatedAt
    name
    timeZone
    pointsPerReal
    pointsExpiryMonths
    pointsPendingDays
    silverThreshold
    goldThreshold
    diamondThreshold
    levelGraceDays
    pointsValue
    pointsSpendMin
    pointsSpendMaxShare
    pointsSpendChannels
    preRegistration
    saleRegistration
    saleTolerance
    corsOrigins
  }
`);

const TenantSettings = graphql(`
  query TenantSettings {
    tenants(first: 1) {
      edges {
        node {
          ...Settings
        }
      }
    }
  }
`);

const UpdateTenantSettings = graphql(`
  mutation UpdateTenantSettings($input: TenantSettingsInput!) {
    updateTenantSettings(input: $input) {
      ...Settings
    }
  }
`);

// The settings the screen edits, each as the input field of the same name
// takes it: text and decimals as strings, whole numbers, switches, lists.
type Key = keyof TenantSettingsInput & keyof SettingsFragment;
type Kind = "text" | "decimal" | "int" | "bool" | "list";
const fields: { key: Key; label: string; kind: Kind; hint?: string }[] = [
  { key: "name", label: "Retailer's name", kind: "text" },
  { key: "timeZone", label: "Time zone", kind: "text", hint: "IANA name: the days of points' expiry and of the dashboards" },
  { key: "pointsPerReal", label: "Points per R$ 1", kind: "decimal" },
  { key: "pointsExpiryMonths", label: "Points expire after (months)", kind: "int" },
  { key: "pointsPendingDays", label: "Points pending for (days)", kind: "int" },
  { key: "silverThreshold", label: "Silver from (points in 12 months)", kind: "int" },
  { key: "goldThreshold", label: "Gold from", kind: "int" },
  { key: "diamondThreshold", label: "Diamond from", kind: "int" },
  { key: "levelGraceDays", label: "Level kept for (days) after falling below", kind: "int" },
  { key: "pointsValue", label: "Value of a point spent (R$)", kind: "decimal" },
  { key: "pointsSpendMin", label: "Fewest points spent at once", kind: "int" },
  { key: "pointsSpendMaxShare", label: "Largest share payable with points (0 to 1)", kind: "decimal" },
  { key: "pointsSpendChannels", label: "Channels where points pay", kind: "list", hint: "pdv, ecommerce; empty: off" },
  { key: "preRegistration", label: "Pre-register unknown customers at the till", kind: "bool" },
  { key: "saleRegistration", label: "Points of sale may register sales", kind: "bool" },
  { key: "saleTolerance", label: "Accepted difference in a sale's values (R$)", kind: "decimal" },
  { key: "corsOrigins", label: "Back-office apps' origins (CORS)", kind: "list", hint: `one a line, such as ${location.origin}` },
];

type Values = Partial<Record<Key, string | boolean>>;

function values(t: SettingsFragment): Values {
  const v: Values = {};
  for (const f of fields) {
    const x = t[f.key];
    v[f.key] = f.kind === "bool" ? Boolean(x) : Array.isArray(x) ? x.join("\n") : x == null ? "" : String(x);
  }
  return v;
}

// changes is the input of the fields changed; an emptied optional decimal
// is not sent (the API keeps it).
function changes(before: Values, after: Values): TenantSettingsInput {
  const input: Record<string, unknown> = {};
  for (const f of fields) {
    const v = after[f.key];
    if (v === before[f.key] || v === undefined) continue;
    if (typeof v === "boolean") input[f.key] = v;
    else if (f.kind === "int") input[f.key] = Number(v);
    else if (f.kind === "list") input[f.key] = v.split(/[\s,]+/).filter(Boolean);
    else if (v.trim() !== "") input[f.key] = v.trim();
  }
  return input as TenantSettingsInput;
}

// Settings shows the tenant's settings and saves the ones changed
// (updateTenantSettings: an admin's; an analyst's token reads them only).
export function Settings() {
  const [{ data, error }] = useQuery({ query: TenantSettings });
  const [saved, setSaved] = useState("");
  const tenant = data ? nodes(data.tenants)[0] : undefined;
  return (
    <section>
      <h1>Settings</h1>
      <Problem error={error} />
      {!data && !error && <p className="muted">Loading…</p>}
      {saved && (
        <p className="ok" role="status">
          {saved}
        </p>
      )}
      {tenant && <SettingsForm key={tenant.updatedAt} tenant={tenant} onSaved={setSaved} />}
    </section>
  );
}

function SettingsForm({ tenant, onSaved }: { tenant: SettingsFragment; onSaved: (s: string) => void }) {
  const [before] = useState(() => values(tenant));
  const [after, setAfter] = useState(before);
  const [result, update] = useMutation(UpdateTenantSettings);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const input = changes(before, after);
    const n = Object.keys(input).length;
    if (n === 0) return onSaved("Nothing changed.");
    onSaved("");
    const r = await update({ input });
    if (r.data) onSaved(`Saved ${n === 1 ? "1 setting" : `${n} settings`}.`);
  }

  return (
    <form className="editor" onSubmit={submit}>
      {fields.map((f) =>
        f.kind === "bool" ? (
          <label key={f.key} className="check">
            <input
              type="checkbox"
              checked={after[f.key] === true}
              onChange={(e) => setAfter({ ...after, [f.key]: e.target.checked })}
            />{" "}
            {f.label}
          </label>
        ) : (
          <Field key={f.key} label={f.label}>
            {f.kind === "list" ? (
              <textarea
                rows={2}
                value={String(after[f.key])}
                onChange={(e) => setAfter({ ...after, [f.key]: e.target.value })}
              />
            ) : (
              <input
                inputMode={f.kind === "text" ? "text" : f.kind === "int" ? "numeric" : "decimal"}
                value={String(after[f.key])}
                onChange={(e) => setAfter({ ...after, [f.key]: e.target.value })}
              />
            )}
            {f.hint && <small className="muted">{f.hint}</small>}
          </Field>
        ),
      )}
      <Problem error={result.error} />
      <div>
        <button type="submit" disabled={result.fetching}>
          Save settings
        </button>
      </div>
    </form>
  );
}
