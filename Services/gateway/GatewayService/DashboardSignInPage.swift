/// The dashboard's sign-in form: the account id and secret key, posted as JSON to
/// `/dashboard/session`, which sets the session's cookies; then on to `/dashboard`.
/// Elements the tests read: `#account`, `#secret`, `#sign-in`, `#error`.
enum DashboardSignInPage {
    /// The page with its policy (its inline script and style allowed by their hashes).
    static let page = HTMLPage(html)

    static let html = HTMLDocument.page(
        title: "Ridesharing — operator sign-in",
        style: """
            body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: #f4f5f7; color: #1d2430; display: grid; place-items: center; min-height: 100vh; }
            form { background: #fff; border-radius: 8px; padding: 20px 24px; box-shadow: 0 1px 3px rgba(0,0,0,.12); display: grid; gap: 10px; min-width: 280px; }
            h1 { margin: 0 0 6px; font-size: 18px; } input { padding: 6px 8px; font: inherit; } #error { color: #d93b3b; min-height: 1.4em; }
            """,
        body: #"""
            <form id="sign-in">
              <h1>Operator sign-in</h1>
              <label>Account id <input id="account" autocomplete="username" required value="ridesharing"></label>
              <label>Secret key <input id="secret" type="password" autocomplete="current-password" required></label>
              <button type="submit">Sign in</button>
              <div id="error" role="alert"></div>
            </form>
            <script>
            document.getElementById("sign-in").addEventListener("submit", async (event) => {
              event.preventDefault();
              const body = JSON.stringify({account_id: document.getElementById("account").value, secret_key: document.getElementById("secret").value});
              const response = await fetch(location.origin + "/dashboard/session", {method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/json"}, body});
              if (response.ok) { location.assign("/dashboard"); return; }
              let message = `${response.status}`;
              try { message = (await response.json()).error.message; } catch (e) {}
              document.getElementById("error").textContent = message;
            });
            </script>
            """#)
}
