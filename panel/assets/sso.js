// The end of single sign-on: the callback redirects here with
// #access_token=… in the URL fragment, which browsers never send to servers.
// Take the token out of the address bar and the history, and post it to the
// panel, which keeps it in an HttpOnly session cookie. A file rather than an
// inline script, so that the page's Content-Security-Policy can forbid those.
(function () {
  'use strict';
  var token = new URLSearchParams(location.hash.slice(1)).get('access_token');
  history.replaceState(null, '', location.pathname + location.search);
  if (!token) {
    document.getElementById('sso-status').hidden = true;
    document.getElementById('sso-missing').hidden = false;
    return;
  }
  var form = document.getElementById('sso-form');
  form.elements.token.value = token;
  form.submit();
})();
