// nodes are a Relay connection's nodes, without the nulls its types allow.
export function nodes<T>(c: { edges?: ReadonlyArray<{ node?: T | null } | null> | null }): T[] {
  return (c.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
}
