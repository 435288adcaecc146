import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Where `npm run dev` and `npm run preview` listen: BACKOFFICE_HOST
// (default 127.0.0.1) and BACKOFFICE_PORT (default 4173), or vite's own
// --host and --port after `--` (npm run preview -- --port 5000). The port is
// strict: taken, the server stops rather than move, since the API allows
// the app's origin (scheme, host and port) by CORS.
const host = process.env.BACKOFFICE_HOST || "127.0.0.1";
const port = Number(process.env.BACKOFFICE_PORT || 4173);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  throw new Error(`BACKOFFICE_PORT=${process.env.BACKOFFICE_PORT}: want a TCP port, 1 to 65535`);
}

export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", sourcemap: true },
  server: { host, port, strictPort: true },
  preview: { host, port, strictPort: true },
});
