// Asks the app's cookie route to set the session cookie (with the one-time code of a log-in) or to clear it
// (after a log-out). The cookie is HttpOnly: this script never sees it. The config is filled in by
// annotator.ui.session_cookie.
(() => {
  const config = __CONFIG__;
  fetch(config.url, {
    method: "POST",
    credentials: "same-origin",
    cache: "no-store",
    headers: {"Content-Type": "application/json", "X-Annotator-Session": "1"},
    body: JSON.stringify(config.body),
  }).catch(() => {});
})();
