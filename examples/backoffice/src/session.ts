// The signed-in session: the API's base URL and a back-office user token
// (`fideliza user token`), kept for the browser tab only (sessionStorage).
export interface Session {
  apiBase: string;
  token: string;
  tenantName: string;
}

const key = "fideliza.backoffice.session";

// The API the sign-in form proposes: `VITE_API_BASE` at build time, else the
// address `fideliza serve` listens on by default.
export const defaultApiBase: string = import.meta.env.VITE_API_BASE ?? "http://127.0.0.1:8080";

export function loadSession(): Session | null {
  const raw = sessionStorage.getItem(key);
  return raw ? (JSON.parse(raw) as Session) : null;
}

export function saveSession(s: Session): void {
  sessionStorage.setItem(key, JSON.stringify(s));
}

export function clearSession(): void {
  sessionStorage.removeItem(key);
}
