// Bootstrap of the GraphQL playground: the access token, the fetcher that
// sends it, and GraphiQL with example queries. It is a file rather than an
// inline script so that the page's Content-Security-Policy can forbid those.
(function () {
  'use strict';

  // sessionStorage: the token lives as long as the browser tab, and is not
  // shared with other tabs nor written to disk for good.
  var TOKEN_KEY = 'fideliza.playground.token';

  // The SSO callback redirects here with #access_token=…: keep the token and
  // take it out of the address bar and the history.
  var fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get('access_token')) {
    sessionStorage.setItem(TOKEN_KEY, fragment.get('access_token'));
    history.replaceState(null, '', location.pathname + location.search);
  }

  var container = document.getElementById('graphiql');

  // The tabs GraphiQL opens with, the first time only: afterwards it restores
  // the user's own tabs from localStorage. They come from the server (package
  // playground's Examples); a tab over a period gets $from and $to, the last
  // days days up to now.
  function isoSeconds(ms) {
    return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  var now = Date.now();
  var examples = JSON.parse(container.dataset.examples).map(function (e) {
    var tab = { query: e.query };
    if (e.days) {
      tab.variables = JSON.stringify({ from: isoSeconds(now - e.days * 86400000), to: isoSeconds(now) }, null, 2);
    }
    return tab;
  });

  // authorizedFetch adds the saved token to every request, read at each
  // call so that a new token applies at once. A header typed in GraphiQL's
  // headers editor wins.
  function authorizedFetch(url, init) {
    var headers = new Headers(init && init.headers);
    var token = sessionStorage.getItem(TOKEN_KEY);
    if (token && !headers.has('Authorization')) {
      headers.set('Authorization', 'Bearer ' + token);
    }
    return fetch(url, Object.assign({}, init, { headers: headers }));
  }

  var root = ReactDOM.createRoot(container);

  // render (re)draws GraphiQL; a new fetcher makes it load the schema again,
  // which fails without a token.
  function render() {
    var fetcher = GraphiQL.createFetcher({ url: container.dataset.endpoint, fetch: authorizedFetch });
    root.render(React.createElement(GraphiQL, { fetcher: fetcher, defaultTabs: examples }));
  }

  var input = document.getElementById('token');
  var status = document.getElementById('token-status');
  input.value = sessionStorage.getItem(TOKEN_KEY) || '';
  document.getElementById('token-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var token = input.value.trim().replace(/^Bearer\s+/i, '');
    if (token) {
      sessionStorage.setItem(TOKEN_KEY, token);
    } else {
      sessionStorage.removeItem(TOKEN_KEY);
    }
    status.textContent = token ? 'Token saved for this tab.' : 'Token removed.';
    render();
  });

  render();
})();
