import { useEffect, useState } from "react";

// The app's pages, addressed by the location's hash so that any static
// server can serve the build.
export type Route =
  | { page: "dashboard" }
  | { page: "customers"; search: string }
  | { page: "customer"; id: string }
  | { page: "campaigns" }
  | { page: "campaign"; id: string }
  | { page: "campaign-new"; from: string } // from: a campaign to copy, or ""
  | { page: "settings" };

export function parse(hash: string): Route {
  const [path, query = ""] = hash.replace(/^#/, "").split("?");
  const q = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean);
  if (parts[0] === "dashboard") return { page: "dashboard" };
  if (parts[0] === "settings") return { page: "settings" };
  if (parts[0] === "customers" && parts[1]) return { page: "customer", id: decodeURIComponent(parts[1]) };
  if (parts[0] === "campaigns" && parts[1] === "new") return { page: "campaign-new", from: q.get("from") ?? "" };
  if (parts[0] === "campaigns" && parts[1]) return { page: "campaign", id: decodeURIComponent(parts[1]) };
  if (parts[0] === "campaigns") return { page: "campaigns" };
  return { page: "customers", search: q.get("q") ?? "" };
}

export function href(r: Route): string {
  switch (r.page) {
    case "dashboard":
      return "#/dashboard";
    case "settings":
      return "#/settings";
    case "customers":
      return r.search ? `#/customers?${new URLSearchParams({ q: r.search })}` : "#/customers";
    case "customer":
      return `#/customers/${encodeURIComponent(r.id)}`;
    case "campaigns":
      return "#/campaigns";
    case "campaign":
      return `#/campaigns/${encodeURIComponent(r.id)}`;
    case "campaign-new":
      return r.from ? `#/campaigns/new?${new URLSearchParams({ from: r.from })}` : "#/campaigns/new";
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parse(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
