import { Client, cacheExchange, fetchExchange, subscriptionExchange, type Exchange } from "urql";
import { createClient as createWSClient, type Client as WSClient } from "graphql-ws";

// Close codes of /graphql/ws after which reconnecting cannot help: the token
// was refused (4403) or expired or revoked (4401), or the client holds too
// many connections or sent too much (4429). See docs/backoffice.md.
const finalCloseCodes = [4401, 4403, 4429];

export type LinkState = "connecting" | "live" | "closed";

// wsURL is the subscriptions' endpoint of the API at apiBase.
export function wsURL(apiBase: string): string {
  const u = new URL("/graphql/ws", apiBase);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  return u.toString();
}

// makeClient is the GraphQL client of a session: queries over HTTP POST with
// the bearer token (a cross-origin call the API allows by CORS),
// subscriptions over one WebSocket (graphql-transport-ws) whose
// connection_init carries the token.
export function makeClient(
  apiBase: string,
  token: string,
  onLink: (state: LinkState) => void,
): { client: Client; ws: WSClient } {
  const ws = createWSClient({
    url: wsURL(apiBase),
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: false,
    shouldRetry: (e) => !(e instanceof CloseEvent && finalCloseCodes.includes(e.code)),
    on: {
      connecting: () => onLink("connecting"),
      connected: () => onLink("live"),
      closed: () => onLink("closed"),
    },
  });
  const client = httpClient(apiBase, token, [
    subscriptionExchange({
      forwardSubscription(request) {
        const input = { ...request, query: request.query ?? "" };
        return {
          subscribe(sink) {
            return { unsubscribe: ws.subscribe(input, sink) };
          },
        };
      },
    }),
  ]);
  return { client, ws };
}

// httpClient sends queries and mutations to apiBase's /graphql as POSTs
// with the bearer token; subscriptions go to the exchanges given.
export function httpClient(apiBase: string, token: string, more: Exchange[] = []): Client {
  return new Client({
    url: new URL("/graphql", apiBase).toString(),
    preferGetMethod: false,
    fetchOptions: () => ({ headers: { authorization: `Bearer ${token}` } }),
    exchanges: [cacheExchange, fetchExchange, ...more],
  });
}
