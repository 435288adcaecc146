import { useEffect, useState } from "react";
import { Provider, type Client } from "urql";
import { makeClient, type LinkState } from "./client";
import { clearSession, loadSession, saveSession, type Session } from "./session";
import { SignIn } from "./SignIn";
import { LiveFeed, LiveSalesProvider } from "./LiveSales";
import { Customers } from "./Customers";
import { Customer } from "./Customer";
import { Campaign, Campaigns } from "./Campaigns";
import { NewCampaign } from "./CampaignForm";
import { Dashboard } from "./Dashboard";
import { Settings } from "./Settings";
import { href, useRoute } from "./route";

export function App() {
  const [session, setSession] = useState(loadSession);
  if (!session) {
    return (
      <SignIn
        onSignIn={(s) => {
          saveSession(s);
          setSession(s);
        }}
      />
    );
  }
  return (
    <SignedIn
      session={session}
      onSignOut={() => {
        clearSession();
        setSession(null);
      }}
    />
  );
}

// SignedIn holds the session's GraphQL client (one WebSocket for its
// subscriptions) for as long as the user stays signed in.
function SignedIn({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const [link, setLink] = useState<LinkState>("connecting");
  const [client, setClient] = useState<Client | null>(null);
  useEffect(() => {
    const c = makeClient(session.apiBase, session.token, setLink);
    setClient(c.client);
    return () => void c.ws.dispose();
  }, [session.apiBase, session.token]);
  const route = useRoute();

  if (!client) return null;
  return (
    <Provider value={client}>
      <LiveSalesProvider>
        <header>
          <strong>Fideliza</strong> <span className="muted">{session.tenantName}</span>
          <nav>
            <a href={href({ page: "dashboard" })} aria-current={route.page === "dashboard"}>
              Dashboard
            </a>
            <a href={href({ page: "customers", search: "" })} aria-current={route.page.startsWith("customer")}>
              Customers
            </a>
            <a href={href({ page: "campaigns" })} aria-current={route.page.startsWith("campaign")}>
              Campaigns
            </a>
            <a href={href({ page: "settings" })} aria-current={route.page === "settings"}>
              Settings
            </a>
          </nav>
          <button className="link-button" onClick={onSignOut}>
            Sign out
          </button>
        </header>
        <div className="layout">
          <main>
            {route.page === "customers" && <Customers key={route.search} search={route.search} />}
            {route.page === "customer" && <Customer id={route.id} />}
            {route.page === "campaigns" && <Campaigns />}
            {route.page === "campaign" && <Campaign id={route.id} />}
            {route.page === "campaign-new" && <NewCampaign from={route.from} />}
            {route.page === "dashboard" && <Dashboard />}
            {route.page === "settings" && <Settings />}
          </main>
          <LiveFeed link={link} />
        </div>
      </LiveSalesProvider>
    </Provider>
  );
}
