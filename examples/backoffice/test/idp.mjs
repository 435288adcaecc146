// A fake OpenID provider for the SSO tests, on a loopback port: discovery,
// JWKS with one RSA key, and the authorization code flow with PKCE (S256)
// whose /authorize signs in, without a page, the user signInAs names.
// Browsers call its discovery and token endpoints from the app's origin,
// so both answer with CORS. The Go tests' twin is auth/authtest.Provider.
import { createHash, createSign, generateKeyPairSync, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";

const b64url = (b) => Buffer.from(b).toString("base64url");

export async function startProvider() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = "idp-key-1";
  const codes = new Map(); // code → { challenge, clientId, redirectUri }
  let user = null; // the claims of who signs in at /authorize; null: access_denied
  const issued = []; // the ID tokens handed out

  function sign(claims) {
    const head = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid }));
    const body = b64url(JSON.stringify(claims));
    const sig = createSign("RSA-SHA256").update(`${head}.${body}`).sign(privateKey);
    return `${head}.${body}.${b64url(sig)}`;
  }

  function json(res, status, v) {
    res.writeHead(status, { "content-type": "application/json", "access-control-allow-origin": "*" });
    res.end(JSON.stringify(v));
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, provider.url);
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, POST",
        "access-control-allow-headers": "content-type, accept, authorization",
      });
      return res.end();
    }
    if (req.method === "GET" && url.pathname === "/.well-known/openid-configuration") {
      return json(res, 200, {
        issuer: provider.url,
        authorization_endpoint: `${provider.url}/authorize`,
        token_endpoint: `${provider.url}/token`,
        jwks_uri: `${provider.url}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"],
      });
    }
    if (req.method === "GET" && url.pathname === "/jwks") {
      return json(res, 200, { keys: [{ ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" }] });
    }
    if (req.method === "GET" && url.pathname === "/authorize") {
      const q = url.searchParams;
      if (q.get("response_type") !== "code" || q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) {
        res.writeHead(400).end("want response_type=code with an S256 code challenge");
        return;
      }
      const back = new URL(q.get("redirect_uri"));
      back.searchParams.set("state", q.get("state"));
      if (!user) back.searchParams.set("error", "access_denied");
      else {
        const code = b64url(randomBytes(16));
        codes.set(code, { challenge: q.get("code_challenge"), clientId: q.get("client_id"), redirectUri: q.get("redirect_uri") });
        back.searchParams.set("code", code);
      }
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if (req.method === "POST" && url.pathname === "/token") {
      let body = "";
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      const grant = codes.get(form.get("code"));
      codes.delete(form.get("code"));
      const verifier = form.get("code_verifier") ?? "";
      if (
        !grant ||
        b64url(createHash("sha256").update(verifier).digest()) !== grant.challenge ||
        form.get("client_id") !== grant.clientId ||
        form.get("redirect_uri") !== grant.redirectUri
      ) {
        return json(res, 400, { error: "invalid_grant" });
      }
      const now = Math.floor(Date.now() / 1000);
      const idToken = sign({ ...user, iss: provider.url, aud: grant.clientId, iat: now, exp: now + 3600 });
      issued.push(idToken);
      // An opaque access token, as many providers give for their own APIs:
      // the app then tries the ID token.
      return json(res, 200, {
        access_token: `opaque-${b64url(randomBytes(16))}`,
        token_type: "Bearer",
        expires_in: 3600,
        id_token: idToken,
      });
    }
    res.writeHead(404).end();
  });

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const provider = {
    url: `http://127.0.0.1:${server.address().port}`,
    issued,
    // signInAs makes /authorize sign in a user with these claims (iss, aud,
    // iat and exp are added); null refuses the sign-in (access_denied).
    signInAs(claims) {
      user = claims;
    },
    async stop() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  return provider;
}
