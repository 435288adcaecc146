import { useEffect, useState, type FormEvent } from "react";
import { graphql } from "./gql";
import { httpClient } from "./client";
import { defaultApiBase, type Session } from "./session";
import { finishSignIn, returning, sso, startSignIn } from "./sso";

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

// refused is the answer of accept when the API answered 401 to every token.
const refused = "refused";

// accept tries tokens in turn against the API at base by reading the user's
// tenant: the session of the first it accepts, else refused or what went
// wrong.
async function accept(base: string, tokens: string[]): Promise<Session | string> {
  let why = refused;
  for (const token of tokens) {
    const r = await httpClient(base, token).query(WhoAmI, {}).toPromise();
    const tenant = r.data?.tenants.edges?.[0]?.node;
    if (!r.error && tenant) return { apiBase: base, token, tenantName: tenant.name };
    if (r.error?.response?.status !== 401) why = r.error?.message ?? "The token sees no tenant.";
  }
  return why;
}

// SignIn takes the API's base URL and a back-office user token, or, when an
// OpenID provider is configured, signs in there; a token is checked by
// reading the user's tenant before it is kept.
export function SignIn({ onSignIn }: { onSignIn: (s: Session) => void }) {
  const [apiBase, setApiBase] = useState(defaultApiBase);
  const [token, setToken] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(returning);

  // Back from the provider: its token, checked like a pasted one (once: the
  // first render's onSignIn does).
  useEffect(() => {
    if (!returning()) return;
    void finishSignIn().then(async (r) => {
      if (r.apiBase) setApiBase(r.apiBase);
      if ("error" in r) {
        setError(`The sign-in at the provider failed: ${r.error}`);
      } else {
        const s = await accept(r.apiBase, r.tokens).catch((err) => `Cannot reach ${r.apiBase}: ${String(err)}`);
        if (typeof s !== "string") return onSignIn(s);
        setError(
          s === refused
            ? `The API refused the provider's token: is it started with --oidc-issuer ${sso?.issuer} and an --oidc-audience the token carries?`
            : s,
        );
      }
      setBusy(false);
    });
  }, []);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError("");
    const base = apiBase.trim().replace(/\/+$/, "");
    try {
      const s = await accept(base, [token.trim().replace(/^Bearer\s+/i, "")]);
      if (typeof s !== "string") return onSignIn(s);
      setError(s === refused ? "The API refused the token: mint a new one with `fideliza user token`." : s);
    } catch (err) {
      setError(`Cannot reach ${base}: ${String(err)}`);
    } finally {
      setBusy(false);
    }
  }

  async function signInAtProvider() {
    setBusy(true);
    setError("");
    try {
      await startSignIn(apiBase.trim().replace(/\/+$/, ""));
    } catch (err) {
      setError(`Cannot reach the provider ${sso?.issuer}: ${err instanceof Error ? err.message : String(err)}`);
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
        {sso && (
          <>
            <button type="button" onClick={signInAtProvider} disabled={busy}>
              Sign in with SSO
            </button>
            <p className="muted">or with a user token:</p>
          </>
        )}
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
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
