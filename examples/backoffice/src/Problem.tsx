import type { CombinedError } from "urql";

// Problem shows a GraphQL or network error with the API's code
// (extensions.code: insufficient_scope, not_found, …).
export function Problem({ error }: { error?: CombinedError }) {
  if (!error) return null;
  const codes = error.graphQLErrors.map((e) => e.extensions?.code).filter(Boolean);
  return (
    <p className="error" role="alert">
      {error.response?.status === 401 ? "The token is no longer accepted: sign out and in again." : error.message}
      {codes.length > 0 && <code> ({codes.join(", ")})</code>}
    </p>
  );
}
