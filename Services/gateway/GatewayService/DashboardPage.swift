/// The operator's dashboard: one self-contained HTML file (no tiles or scripts from elsewhere).
/// The map draws the streets around the devices (`/v1/streets`, from the road data) under them.
/// Elements the tests read: `#services` (`li[data-service][data-up]`), `#counts`
/// (`[data-status]` cells), `#map` (`circle[data-device]`, `rect[data-order]`, `path.street`,
/// `polyline.planned[data-ride]`, `polyline.trail[data-ride]`), `#orders` rows, `#reports`
/// (`.report[data-report][data-report-status]`, `li[data-stamp]`, `textarea#answer-<id>`,
/// `.payment[data-payment]` with `button[data-refund]` for a paid ride), `#people`
/// (`tr[data-person][data-suspended]`), `#person` (`[data-person-view]`, `tr.ride[data-ride]`,
/// `li.person-report[data-report]`, a driver's `[data-approval]` with `li[data-document][data-expires]`
/// and `button[data-approve]` or `button[data-withdraw]`).
enum DashboardPage {
    /// The page with its policy (its inline script and style allowed by their hashes).
    static let page = HTMLPage(html)

    static let html = HTMLDocument.page(
        title: "Ridesharing — dashboard",
        style: #"""
              body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: #f4f5f7; color: #1d2430; }
              header { padding: 10px 16px; background: #1d2430; color: #fff; display: flex; gap: 16px; align-items: baseline; }
              header h1 { margin: 0; font-size: 18px; }
              .wide { grid-column: 1 / 3; }
              main { display: grid; grid-template-columns: 2fr 1fr; gap: 12px; padding: 12px; }
              .photo { border-radius: 50%; object-fit: cover; vertical-align: middle; }
              .card { background: #fff; border-radius: 8px; padding: 10px 14px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
              svg { width: 100%; height: auto; background: #e9eef3; border-radius: 6px; }
              .available { fill: #16a34a; color: #16a34a; } .unavailable { fill: #98a2b3; color: #98a2b3; } .order { fill: #f59e0b; color: #f59e0b; }
              ul { list-style: none; padding: 0; margin: 0; } li { padding: 2px 0; }
              .up::before { content: "● "; color: #16a34a; } .down::before { content: "● "; color: #d93b3b; }
              table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eef0f3; }
              .muted { color: #667085; }
              .street { stroke: #fff; stroke-width: 3; stroke-linecap: round; fill: none; }
              .planned { stroke: #8fb0f5; stroke-width: 4; fill: none; stroke-linejoin: round; }
              .trail { stroke: #2f6fed; stroke-width: 2; fill: none; stroke-dasharray: 4 3; }
              .report { border-bottom: 1px solid #eef0f3; padding: 6px 0; } .timeline { font-size: 12px; margin: 2px 0; } .timeline li { display: inline; margin-right: 8px; }
              .report textarea { width: 60%; vertical-align: bottom; }
            """#,
        body: #"""
            <header><h1>Ridesharing</h1><span id="updated" class="muted">loading…</span><button id="sign-out" type="button">Sign out</button></header>
            <main>
              <div class="card">
                <svg id="map" viewBox="0 0 800 500" role="img" aria-label="devices and open orders"></svg>
                <div class="muted"><span class="available">●</span> available driver · <span class="unavailable">●</span> unavailable · <span class="order">■</span> open order's pickup · <span id="device-count">0</span> devices</div>
              </div>
              <div>
                <div class="card"><h3>Services</h3><ul id="services"></ul></div>
                <div class="card"><h3>Orders by status</h3><table id="counts"></table></div>
              </div>
              <div class="card wide"><h3>Open orders</h3><table id="orders"></table></div>
              <div class="card wide"><h3>Ride reports</h3><div id="reports" class="muted">none</div></div>
            \#(DashboardPeople.card)
            </main>
            <script>
            "use strict";
            const $ = (id) => document.getElementById(id);
            const escape = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
            let streetsFor = "", streets = [];
            // The streets around the map's centre, fetched again when the view moves or widens.
            function fetchStreets(lat, lon, radius, redraw) {
              const key = `${lat.toFixed(3)},${lon.toFixed(3)}/${radius}`;
              if (key === streetsFor) return;
              streetsFor = key;
              fetch(location.origin + `/v1/streets?latitude=${lat}&longitude=${lon}&radius=${radius}`, {cache: "no-store"})
                .then((r) => r.ok ? r.json() : {coordinates: []}).then((layout) => { streets = layout.coordinates || []; redraw(); })
                .catch(() => { streetsFor = ""; });
            }
            const statuses = ["NEW", "ACCEPTED", "PICKING_UP", "REACHED_PICKUP", "STARTED_RIDE", "DROPPING_OFF", "REACHED_DROPOFF", "COMPLETED", "CANCELLED"];

            function drawMap(devices, orders, rides) {
              const points = devices.map((d) => [d.location.coordinates[1], d.location.coordinates[0]]).concat(orders.map((o) => [o.pickup.latitude, o.pickup.longitude]));
              if (points.length === 0) { $("map").innerHTML = '<text x="400" y="250" text-anchor="middle" fill="#667085">no devices yet</text>'; return; }
              const lats = points.map((p) => p[0]), lons = points.map((p) => p[1]);
              const midLat = (Math.min(...lats) + Math.max(...lats)) / 2, k = Math.cos(midLat * Math.PI / 180);
              const spanX = Math.max((Math.max(...lons) - Math.min(...lons)) * k, 0.005), spanY = Math.max(Math.max(...lats) - Math.min(...lats), 0.005);
              const scale = Math.min(760 / spanX, 460 / spanY);
              const cx = (Math.min(...lons) + Math.max(...lons)) / 2, cy = midLat;
              const at = (lat, lon) => [400 + (lon - cx) * k * scale, 250 - (lat - cy) * scale];
              const radius = Math.min(5000, Math.max(200, Math.round(Math.max(spanX, spanY) * 111320 * 0.75)));
              fetchStreets(cy, cx, radius, () => drawMap(devices, orders, rides));
              let svg = streets.map((l) => `<path class="street" d="M${l.map((c) => at(c[1], c[0]).map((v) => v.toFixed(1)).join(" ")).join(" L")}"/>`).join("");
              if (streets.length) svg += '<text x="796" y="496" text-anchor="end" font-size="10" fill="#667085">© OpenStreetMap contributors</text>';
              const line = (positions) => positions.map((c) => at(c[1], c[0]).map((v) => v.toFixed(1)).join(",")).join(" ");
              for (const r of rides) {
                svg += `<polyline class="planned" data-ride="${escape(r.order_id)}" points="${line(r.planned)}"/>`;
                svg += `<polyline class="trail" data-ride="${escape(r.order_id)}" points="${line(r.trail)}"/>`;
              }
              for (const o of orders) {
                const [x, y] = at(o.pickup.latitude, o.pickup.longitude);
                svg += `<rect class="order" data-order="${escape(o.id)}" x="${x - 5}" y="${y - 5}" width="10" height="10"><title>${escape(o.id)} ${o.status}</title></rect>`;
              }
              for (const d of devices) {
                const [x, y] = at(d.location.coordinates[1], d.location.coordinates[0]);
                svg += `<circle class="${d.available ? "available" : "unavailable"}" data-device="${escape(d.device_id)}" cx="${x}" cy="${y}" r="6"><title>${escape(d.name || d.device_id)}</title></circle>`;
              }
              $("map").innerHTML = svg;
            }

            // A driver's photo: only the gateway's own photo paths.
            const photo = (url) => typeof url === "string" && /^\/v1\/photos\/[0-9a-f]{64}$/.test(url)
              ? `<img class="photo" src="${url}" alt="" width="24" height="24"> ` : "";

            function show(data) {
              $("services").innerHTML = Object.keys(data.services).sort().map((s) =>
                `<li data-service="${escape(s)}" data-up="${data.services[s]}" class="${data.services[s] ? "up" : "down"}">${escape(s)} ${data.services[s] ? "up" : "no workers"}</li>`).join("");
              const devices = data.devices || [], orders = data.orders ? data.orders.open : [];
              const counts = data.orders ? data.orders.by_status : {};
              $("counts").innerHTML = data.orders ? statuses.map((s) => `<tr><td>${s}</td><td data-status="${s}">${counts[s] || 0}</td></tr>`).join("")
                                                  : "<tr><td>orders is not answering</td></tr>";
              $("orders").innerHTML = "<tr><th>order</th><th>status</th><th>driver</th><th>updated</th></tr>" + orders.map((o) =>
                `<tr data-order="${escape(o.id)}"><td>${escape(o.id)}</td><td>${o.status}</td><td>${photo(o.driver_photo_url)}${escape(o.driver_name || "—")}</td><td>${new Date(o.updated_at).toLocaleTimeString()}</td></tr>`).join("");
              $("device-count").textContent = devices.length;
              drawMap(devices, orders, data.rides || []);
              $("updated").textContent = "updated " + new Date().toLocaleTimeString();
            }

            // Ride reports with their rides' timelines; an open one has a box for the operator's answer.
            // Drawn again only when they changed, so an answer being typed is kept.
            let reportsShown = "";
            function showReports(list) {
              const text = JSON.stringify(list);
              if (text === reportsShown) return;
              reportsShown = text;
              $("reports").innerHTML = list.length === 0 ? "none" : list.map(({report: r, order, timeline}) => `
                <div class="report" data-report="${escape(r.id)}" data-report-status="${escape(r.status)}">
                  <b>${escape(r.category)}</b> · ride ${escape(r.order_id)} · ${escape(r.reporter_role)} ${escape(r.reporter_id)} · ${new Date(r.created_at).toLocaleString()}
                  ${photo(r.photo_url)}<div class="report-text">${escape(r.text)}</div>
                  <ol class="timeline">${timeline.map((s) => `<li data-stamp="${escape(s.status)}">${escape(s.status)} ${new Date(s.at).toLocaleTimeString()}</li>`).join("")}</ol>
                  ${order && order.payment ? `<div class="payment" data-payment="${escape(order.payment)}">payment ${escape(order.payment)}${order.payment === "paid"
                    ? ` <button data-refund="${escape(order.id)}">Refund</button>` : ""}</div>` : ""}
                  ${r.status === "answered" ? `<div class="answer">Answered: ${escape(r.answer)}</div>`
                    : `<textarea id="answer-${escape(r.id)}" rows="2" maxlength="2000"></textarea> <button data-answer="${escape(r.id)}">Answer</button>`}
                </div>`).join("");
            }
            // A change made with a dashboard session carries its CSRF token (a cookie this page may read
            // and another site's may not); with HTTP Basic there is none, and none is needed.
            function csrf() {
              const found = document.cookie.split("; ").find((c) => c.startsWith("ride_operator_csrf="));
              return found ? found.slice("ride_operator_csrf=".length) : "";
            }
            // A session that ended: back to the sign-in form.
            function signedOut(response) {
              if (response.status === 401) { location.assign("/dashboard/login"); return true; }
              return false;
            }
            $("sign-out").addEventListener("click", async () => {
              await fetch(location.origin + "/dashboard/session", {method: "DELETE", credentials: "same-origin"});
              location.assign("/dashboard/login");
            });
            // A paid ride's charge given back, whole (POST /dashboard/orders/{id}/refund); the rider is notified.
            document.addEventListener("click", async (event) => {
              const order = event.target.dataset && event.target.dataset.refund;
              if (!order || !confirm(`Refund the whole charge of ride ${order}?`)) return;
              const response = await fetch(location.origin + `/dashboard/orders/${encodeURIComponent(order)}/refund`, {
                method: "POST", credentials: "same-origin", headers: {"Idempotency-Key": `refund-${order}`, "X-CSRF-Token": csrf()}});
              if (!response.ok) { alert(`not refunded: ${response.status} ${await response.text()}`); return; }
              refreshReports(false);
            });
            document.addEventListener("click", async (event) => {
              const id = event.target.dataset && event.target.dataset.answer;
              if (!id) return;
              const answer = $("answer-" + id).value;
              const response = await fetch(location.origin + `/dashboard/reports/${encodeURIComponent(id)}/answer`, {
                method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf()}, body: JSON.stringify({answer})});
              if (!response.ok) { alert(`not answered: ${response.status} ${await response.text()}`); return; }
              refreshReports(false);
            });
            async function refreshReports(again = true) {
              try {
                const response = await fetch(location.origin + "/dashboard/reports?limit=20", {cache: "no-store", credentials: "same-origin"});
                if (response.ok) showReports((await response.json()).reports);
              } catch (e) {}
              if (again) setTimeout(refreshReports, 10000);
            }
            refreshReports();
            \#(DashboardPeople.script)

            async function refresh() {
              try {
                // From the origin: a page opened as http://user:secret@host/dashboard has those credentials in its
                // URL, and fetch() refuses a URL built on it; the browser sends the remembered Basic credentials.
                const response = await fetch(location.origin + "/dashboard/data", {cache: "no-store", credentials: "same-origin"});
                if (response.ok) show(await response.json()); else if (!signedOut(response)) $("updated").textContent = `error ${response.status}`;
              } catch (e) {
                $("updated").textContent = "offline; retrying…";
              }
              setTimeout(refresh, 2000);
            }
            refresh();
            </script>
            """#)
}
