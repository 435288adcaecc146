import type { CombinedError } from "urql";

interface FieldProblem {
  field: string;
  message: string;
}

// Problem shows a GraphQL or network error with the API's code
// (extensions.code: insufficient_scope, not_found, validation_error, …) and,
// for a validation error, each field's problem.
export function Problem({ error }: { error?: CombinedError }) {
  if (!error) return null;
  const codes = error.graphQLErrors.map((e) => e.extensions?.code).filter(Boolean);
  const fields = error.graphQLErrors.flatMap((e) => (e.extensions?.details as FieldProblem[] | undefined) ?? []);
  return (
    <div className="error" role="alert">
      {error.response?.status === 401 ? "The token is no longer accepted: sign out and in again." : error.message}
      {codes.length > 0 && <code> ({codes.join(", ")})</code>}
      {fields.length > 1 && (
        <ul>
          {fields.map((f) => (
            <li key={f.field}>
              <code>{f.field}</code>: {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
