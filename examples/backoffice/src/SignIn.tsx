import { useState, type FormEvent } from "react";
import { graphql } from "./gql";
import { httpClient } from "./client";
import { defaultApiBase, type Session } from "./session";

const WhoAmI = graphql(`
  query WhoAmI {
    tenants(first: 1) {
      edges {
        node {
          id
          name
        }
      }
    }
  }
`);

// SignIn takes the API's base URL and a back-office user token, and checks
// the token by reading the user's tenant before keeping it.
export function SignIn({ onSignIn }: { onSignIn: (s: Session) => void }) {
  const [apiBase, setApiBase] = useState(defaultApiBase);
  const [token, setToken] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError("");
    const t = token.trim().replace(/^Bearer\s+/i, "");
    const base = apiBase.trim().replace(/\/+$/, "");
    try {
      const r = await httpClient(base, t).query(WhoAmI, {}).toPromise();
      const tenant = r.data?.tenants.edges?.[0]?.node;
      if (r.error || !tenant) {
        const status = r.error?.response?.status;
        setError(
          status === 401
            ? "The API refused the token: mint a new one with `fideliza user token`."
            : (r.error?.message ?? "The token sees no tenant."),
        );
        return;
      }
      onSignIn({ apiBase: base, token: t, tenantName: tenant.name });
    } catch (err) {
      setError(`Cannot reach ${base}: ${String(err)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in">
      <h1>Fideliza back office</h1>
      <form onSubmit={submit}>
        <label>
          API base URL
          <input value={apiBase} onChange={(e) => setApiBase(e.target.value)} required type="url" />
        </label>
        <label>
          User token
          <textarea
            value={token}
            onChange={(e) => setToken(e.target.value)}
            required
            rows={5}
            placeholder="fideliza user token --tenant <tenant-id> --public-url <API base URL>"
          />
        </label>
        {error && <p className="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
