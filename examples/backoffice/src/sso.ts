import { ErrorResponse, OidcClient, WebStorageStateStore } from "oidc-client-ts";

// Sign-in at the company's OpenID provider (SSO), offered when the build
// names one: VITE_OIDC_ISSUER, the provider's issuer (the API's
// --oidc-issuer), and VITE_OIDC_CLIENT_ID, this app's public client there,
// whose redirect URI is the app's own address. Authorization code flow with
// PKCE (oidc-client-ts); the provider's token is then used as a pasted one.
export const sso: { issuer: string; clientId: string; scope: string } | null =
  import.meta.env.VITE_OIDC_ISSUER && import.meta.env.VITE_OIDC_CLIENT_ID
    ? {
        issuer: import.meta.env.VITE_OIDC_ISSUER,
        clientId: import.meta.env.VITE_OIDC_CLIENT_ID,
        scope: import.meta.env.VITE_OIDC_SCOPE ?? "openid profile email",
      }
    : null;

function client(): OidcClient {
  if (!sso) throw new Error("no OpenID provider is configured (VITE_OIDC_ISSUER, VITE_OIDC_CLIENT_ID)");
  return new OidcClient({
    authority: sso.issuer,
    client_id: sso.clientId,
    redirect_uri: location.origin + location.pathname,
    response_type: "code",
    scope: sso.scope,
    // The sign-in's state and PKCE verifier, for this tab only.
    stateStore: new WebStorageStateStore({ store: sessionStorage }),
  });
}

// startSignIn sends the browser to the provider; apiBase comes back with
// the user.
export async function startSignIn(apiBase: string): Promise<void> {
  const request = await client().createSigninRequest({ state: { apiBase } });
  location.assign(request.url);
}

// returning tells whether the provider has just sent the browser back here.
export function returning(): boolean {
  const q = new URLSearchParams(location.search);
  return sso !== null && q.has("state") && (q.has("code") || q.has("error"));
}

// The outcome of a sign-in at the provider: the API's base URL chosen before
// it, and the tokens to try (in order) or why there are none.
export type Returned = { apiBase: string; tokens: string[] } | { apiBase?: string; error: string };

let finishing: Promise<Returned> | null = null;

// finishSignIn redeems the provider's code (once, however often it is
// called) and takes it off the address bar. tokens are the candidates for
// the API, in order: the access token (when the provider issues JWTs for the
// API's --oidc-audience), then the ID token (its aud is this app's client id).
export function finishSignIn(): Promise<Returned> {
  finishing ??= client()
    .processSigninResponse(location.href)
    .then(
      (r): Returned => ({
        apiBase: (r.userState as { apiBase: string }).apiBase,
        tokens: [r.access_token, r.id_token].filter((t): t is string => Boolean(t)),
      }),
      (err: unknown): Returned => ({
        apiBase: err instanceof ErrorResponse ? (err.state as { apiBase?: string } | undefined)?.apiBase : undefined,
        error: err instanceof Error ? err.message : String(err),
      }),
    )
    .finally(() => history.replaceState(null, "", location.pathname));
  return finishing;
}
