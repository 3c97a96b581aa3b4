/// `/app/app.js`: what the rider and the driver app share — the session (kept in the tab's
/// `sessionStorage`, refreshed before the access token runs out), calls to `/v1` with their
/// errors in words, the live sockets (reconnecting), and the map (the city's streets in SVG; a tap
/// gives a point). Plain JavaScript, no build step, nothing from elsewhere.
enum WebAppCommonScript {
    static let source = #"""
        "use strict";
        const $ = (id) => document.getElementById(id);
        const App = {session: JSON.parse(sessionStorage.getItem("ride.session") || "null"), onSession: () => {}};

        // Idempotency keys: crypto.randomUUID is missing outside secure contexts (a phone on http://).
        App.key = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");

        App.say = (text, kind) => {
          const notice = $("notice");
          notice.textContent = text || "";
          notice.className = kind === "error" ? "notice error" : "notice";
        };

        App.keep = (session) => {
          App.session = session;
          if (session) sessionStorage.setItem("ride.session", JSON.stringify(session)); else sessionStorage.removeItem("ride.session");
        };

        class APIError extends Error {
          constructor(code, message, status) { super(message); this.code = code; this.status = status; }
        }
        App.APIError = APIError;

        // A call to the gateway. Changes carry an Idempotency-Key (a retry after a lost reply is
        // answered once); an expired access token is refreshed once and the call sent again.
        App.api = async (method, path, body, retried) => {
          const headers = {"Accept": "application/json"};
          if (body !== undefined) headers["Content-Type"] = "application/json";
          if (App.session) headers["Authorization"] = "Bearer " + App.session.token;
          if (method !== "GET" && method !== "DELETE") headers["Idempotency-Key"] = App.key();
          let response;
          try {
            response = await fetch("/v1" + path, {method, headers, cache: "no-store", body: body === undefined ? undefined : JSON.stringify(body)});
          } catch (e) {
            throw new APIError("offline", "The platform cannot be reached: check the connection and try again (nothing was lost).", 0);
          }
          const text = await response.text();
          let json = null;
          try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
          if (response.status === 401 && App.session && !retried && path !== "/auth/refresh") {
            if (await App.refresh()) return App.api(method, path, body, true);
            const error = (json && json.error) || {};
            App.signOut("Your session ended" + (error.message ? ` (${error.message})` : "") + ": log in again.");
          }
          if (!response.ok) {
            const error = (json && json.error) || {};
            throw new APIError(error.code || String(response.status), error.message || response.statusText || "the request failed", response.status);
          }
          return json;
        };

        App.refresh = async () => {
          if (!App.session || !App.session.refresh_token) return false;
          try {
            const session = await App.api("POST", "/auth/refresh", {refresh_token: App.session.refresh_token}, true);
            App.keep(Object.assign({}, App.session, session));
            return true;
          } catch (e) { return false; }
        };

        App.signOut = (why) => {
          App.keep(null);
          App.sockets.forEach((s) => s.close());
          App.onSession();
          App.say(why || "Logged out.");
        };

        // The log-in and sign-up form: one for both apps, `role` says which account a sign-up makes.
        App.signIn = (role, extra) => {
          const form = $("sign-in");
          const credentials = () => ({phone_number: $("phone").value.trim(), password: $("password").value});
          form.addEventListener("submit", async (event) => {
            event.preventDefault();
            const signUp = event.submitter && event.submitter.id === "sign-up";
            try {
              if (signUp) {
                await App.api("POST", "/users", Object.assign({role, name: $("name").value.trim() || "New " + role}, credentials(), extra ? extra() : {}));
              }
              App.keep(await App.api("POST", "/sessions", credentials()));
              App.say(signUp ? "Welcome! Your account is made." : "Logged in.");
              App.onSession();
            } catch (e) {
              App.say((signUp ? "Sign-up failed: " : "Log-in failed: ") + e.message, "error");
            }
          });
          $("log-out").addEventListener("click", async () => {
            try { await App.api("POST", "/auth/logout"); } catch (e) { /* the session ends here either way */ }
            App.signOut();
          });
        };

        // A live socket (`/v1/orders/{id}/live`, `/v1/me/live`): JSON messages to `handle`; it
        // connects again after a drop, with the last sequence seen, and a fresh token after 4401.
        // What the app sends (a `watch_nearby`) is kept and sent again on each connection.
        App.sockets = new Set();
        App.live = (path, handle) => {
          let socket, closed = false, after = null, delay = 500, standing = null;
          const open = () => {
            if (closed || !App.session) return;
            const query = `?access_token=${encodeURIComponent(App.session.token)}` + (after !== null ? `&after=${after}` : "");
            socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/v1${path}${query}`);
            socket.onopen = () => { delay = 500; if (standing) socket.send(standing); };
            socket.onmessage = (event) => {
              const message = JSON.parse(event.data);
              if (typeof message.sequence === "number") after = Math.max(after || 0, message.sequence);
              handle(message);
            };
            socket.onclose = async (event) => {
              if (closed) return;
              if (event.code === 4401 && !(await App.refresh())) { App.signOut("Your session ended: log in again."); return; }
              if (event.code === 4403 || event.code === 4404) { handle({type: "closed", code: event.code}); return; }
              setTimeout(open, delay);
              delay = Math.min(delay * 2, 8000);
            };
          };
          // send: what the socket asks to watch, sent again on each connection; post: one message
          // now, false when the socket is not open (the caller sends it another way).
          const handleSocket = {
            close: () => { closed = true; App.sockets.delete(handleSocket); if (socket) socket.close(); },
            send: (m) => { standing = JSON.stringify(m); if (socket && socket.readyState === 1) socket.send(standing); },
            post: (m) => { if (!socket || socket.readyState !== 1) return false; socket.send(JSON.stringify(m)); return true; }
          };
          App.sockets.add(handleSocket);
          open();
          return handleSocket;
        };

        // The chat of the ride followed (`order()`): each message shown once, and the form that sends one.
        App.chat = (order, me) => {
          const show = (m) => {
            if (document.getElementById("message-" + m.id)) return;
            const item = App.text("li", `${m.sender_role === me ? "You" : m.sender_role === "rider" ? "Rider" : "Driver"}: ${m.text}`);
            item.id = "message-" + m.id;
            $("messages").appendChild(item);
          };
          $("chat-form").addEventListener("submit", async (event) => {
            event.preventDefault();
            const text = $("chat-text").value.trim();
            if (!text || !order()) return;
            try { show(await App.api("POST", `/orders/${order().id}/messages`, {text})); $("chat-text").value = ""; }
            catch (e) { App.say("Message not sent: " + e.message, "error"); }
          });
          return show;
        };

        App.money = (cents, currency) => `${(cents / 100).toFixed(2)} ${currency || "EUR"}`;
        App.minutes = (seconds) => seconds < 60 ? `${Math.round(seconds)} s` : `${Math.round(seconds / 60)} min`;
        App.time = (iso) => new Date(iso).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"});
        App.text = (tag, text, className) => { const e = document.createElement(tag); e.textContent = text; if (className) e.className = className; return e; };

        // The map: an SVG of the streets around `centre` (metres on a flat projection, exact enough
        // for a city), markers and lines by id; a tap or Enter on it gives the point under it.
        class StreetMap {
          constructor(svg, centre) {
            this.svg = svg; this.centre = centre; this.extent = 800; this.streetsFor = "";
            this.layers = {};
            for (const name of ["streets", "lines", "markers"]) {
              this.layers[name] = document.createElementNS("http://www.w3.org/2000/svg", "g");
              svg.appendChild(this.layers[name]);
            }
            this.fetchStreets();
          }
          scale() { return 190 / this.extent; }
          place(lat, lon) {
            const k = Math.PI / 180, r = 6371000, s = this.scale();
            const x = (lon - this.centre[1]) * k * r * Math.cos(this.centre[0] * k), y = (lat - this.centre[0]) * k * r;
            return [300 + x * s, 200 - y * s];
          }
          point(px, py) {
            const k = Math.PI / 180, r = 6371000, s = this.scale();
            const x = (px - 300) / s, y = (200 - py) / s;
            return [this.centre[0] + y / (k * r), this.centre[1] + x / (k * r * Math.cos(this.centre[0] * k))];
          }
          onTap(handle) {
            this.svg.addEventListener("click", (event) => {
              const p = this.svg.createSVGPoint(); p.x = event.clientX; p.y = event.clientY;
              const local = p.matrixTransform(this.svg.getScreenCTM().inverse());
              handle(this.point(local.x, local.y));
            });
          }
          async fetchStreets() {
            const key = this.centre.join(",") + "/" + this.extent;
            if (key === this.streetsFor) return;
            this.streetsFor = key;
            try {
              const layout = await App.api("GET", `/streets?latitude=${this.centre[0]}&longitude=${this.centre[1]}&radius=${Math.min(5000, Math.round(this.extent * 1.7))}`);
              this.streets = layout.coordinates || [];
              this.drawStreets();
            } catch (e) { this.streetsFor = ""; }
          }
          drawStreets() {
            const d = (this.streets || []).map((l) => "M" + l.map((c) => this.place(c[1], c[0]).map((v) => v.toFixed(1)).join(" ")).join(" L")).join(" ");
            this.element("streets", "path", "streets", {d, class: "street"});
          }
          element(layer, tag, id, attributes) {
            let e = document.getElementById(id);
            if (!e) { e = document.createElementNS("http://www.w3.org/2000/svg", tag); e.id = id; this.layers[layer].appendChild(e); }
            for (const [name, value] of Object.entries(attributes)) e.setAttribute(name, value);
            return e;
          }
          marker(id, lat, lon, label) {
            const [x, y] = this.place(lat, lon);
            const e = this.element("markers", "circle", id, {cx: x.toFixed(1), cy: y.toFixed(1), r: 9, class: "marker " + id, "data-lat": lat, "data-lon": lon});
            e.innerHTML = ""; e.appendChild(document.createElementNS("http://www.w3.org/2000/svg", "title")).textContent = label || id;
          }
          remove(id) { const e = document.getElementById(id); if (e) e.remove(); }
          line(id, points) {
            this.element("lines", "polyline", id, {points: points.map(([lat, lon]) => this.place(lat, lon).map((v) => v.toFixed(1)).join(",")).join(" "), class: "line " + id});
          }
          // Zooms out (never in) so every point shows, then draws again.
          fit(points) {
            const needed = Math.max(...points.map(([lat, lon]) => { const [x, y] = this.place(lat, lon); return Math.max(Math.abs(x - 300), Math.abs(y - 200)) / this.scale() * 1.2; }));
            const extent = [800, 1500, 3000, 6000, 12000, 25000].find((e) => e >= needed) || needed;
            if (extent > this.extent) { this.extent = extent; this.fetchStreets(); return true; }
            return false;
          }
        }
        App.StreetMap = StreetMap;
        App.centre = () => [Number(document.body.dataset.latitude), Number(document.body.dataset.longitude)];
        """#
}
