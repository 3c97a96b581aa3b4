/// The share page: one self-contained HTML file (no tiles, fonts or scripts from elsewhere, so it
/// works with no internet access). At `/<id>` it reads `/v1/shares/<id>` (a trip), at `/ride/<id>`
/// `/v1/ride-shares/<id>` (a ride: where it stands, and the trip driven now, drawn as a trip's
/// page draws it — a new leg starts a new trail). It reads every second and draws the trip on
/// an SVG map — the streets around the destination (`/v1/streets`, from the road data) over a
/// metric grid — with the way the driver is to take (the estimate's route), the driver's marker and
/// trail, the ETA, the driver's name and car; once completed, the summary's route, distance and
/// duration. Elements the tests read: `#driver-marker` (`data-lat`, `data-lon`), `#status`, `#eta`,
/// `#driver`, `#driver-photo`, `#car-photo` (`src`: the photos' paths), `#summary`, `#route`, `#planned`, `#streets` (`path.street`).
enum SharePage {
    /// The page with its policy (its inline script and style allowed by their hashes).
    static let page = HTMLPage(html)

    static let html = HTMLDocument.page(
        title: "Your ride",
        style: #"""
              body { margin: 0; font: 15px/1.4 system-ui, sans-serif; background: #f4f5f7; color: #1d2430; }
              header { padding: 12px 16px; background: #1d2430; color: #fff; }
              header h1 { margin: 0; font-size: 18px; }
              main { max-width: 720px; margin: 0 auto; padding: 12px; }
              .photo { width: 56px; height: 56px; object-fit: cover; border-radius: 50%; margin-right: 8px; }
              .card { background: #fff; border-radius: 8px; padding: 12px 16px; margin-bottom: 12px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
              svg { width: 100%; height: auto; background: #e9eef3; border-radius: 8px; }
              .grid { stroke: #d3dae2; stroke-width: 1; }
              .street { stroke: #fff; stroke-width: 5; stroke-linecap: round; fill: none; }
              #planned { fill: none; stroke: #8fb0f5; stroke-width: 6; stroke-linejoin: round; stroke-linecap: round; }
              #attribution { font-size: 10px; fill: #667085; }
              #route { fill: none; stroke: #2f6fed; stroke-width: 4; stroke-linejoin: round; stroke-linecap: round; }
              #trail { fill: none; stroke: #2f6fed; stroke-width: 3; stroke-dasharray: 6 5; }
              #dest-marker { fill: #d93b3b; stroke: #fff; stroke-width: 3; }
              #driver-marker { fill: #1d2430; stroke: #fff; stroke-width: 3; }
              .muted { color: #667085; }
              #summary[hidden], #live[hidden] { display: none; }
              .figures { display: flex; gap: 24px; }
              .figures b { font-size: 22px; display: block; }
            """#,
        body: #"""
            <header><h1>Your ride</h1><span id="status" class="muted">loading…</span></header>
            <main>
              <svg id="map" viewBox="0 0 600 400" role="img" aria-label="map of the trip">
                <g id="grid"></g>
                <g id="streets"></g>
                <polyline id="planned" points=""></polyline>
                <polyline id="route" points=""></polyline>
                <polyline id="trail" points=""></polyline>
                <circle id="dest-marker" r="9" cx="-20" cy="-20"></circle>
                <circle id="driver-marker" r="10" cx="-20" cy="-20" data-lat="" data-lon=""></circle>
                <text id="attribution" x="594" y="394" text-anchor="end"></text>
              </svg>
              <div class="card" id="live">
                <div><img id="driver-photo" class="photo" alt="the driver" hidden><img id="car-photo" class="photo" alt="the car" hidden></div>
                <div id="driver" class="muted"></div>
                <div>Arriving: <span id="eta">—</span></div>
              </div>
              <div class="card" id="summary" hidden>
                <div class="figures">
                  <div><b id="distance">—</b>distance</div>
                  <div><b id="duration">—</b>duration</div>
                </div>
              </div>
              <p class="muted" id="error"></p>
            </main>
            <script>
            "use strict";
            const parts = location.pathname.split("/").filter(Boolean);
            const shareID = parts.pop();
            const endpoint = parts[0] === "ride" ? "/v1/ride-shares/" : "/v1/shares/";
            const rideLabels = {
              NEW: "Finding a driver", ACCEPTED: "Your driver is on the way", PICKING_UP: "Your driver is on the way",
              REACHED_PICKUP: "Your driver is at the pickup", STARTED_RIDE: "On the way to the drop-off",
              DROPPING_OFF: "On the way to the drop-off", REACHED_DROPOFF: "Arrived at the drop-off",
              COMPLETED: "Ride completed", CANCELLED: "Ride cancelled"
            };
            let leg;                                                          // the trip the trail belongs to
            const trail = [];
            let extent = 250;                                                // metres shown from the centre
            let streetsFor = "", streets = [];                               // the street lines fetched, and for what
            const $ = (id) => document.getElementById(id);

            // The streets around the destination, fetched again only when the map zooms out.
            function fetchStreets(origin, view) {
              const key = origin.join(",") + "/" + extent;
              if (key === streetsFor) return;
              streetsFor = key;
              const radius = Math.min(5000, Math.round(extent * 1.7));
              fetch(`/v1/streets?latitude=${origin[0]}&longitude=${origin[1]}&radius=${radius}`, {cache: "no-store"})
                .then((r) => r.ok ? r.json() : {coordinates: []})
                .then((layout) => { streets = layout.coordinates || []; draw(view); })
                .catch(() => { streetsFor = ""; });
            }

            // Metres east/north of the destination: a flat projection is exact enough for a city.
            function project(origin, lat, lon) {
              const k = Math.PI / 180, r = 6371000;
              return [(lon - origin[1]) * k * r * Math.cos(origin[0] * k), (lat - origin[0]) * k * r];
            }

            function draw(view) {
              const trip = view.trip;
              const dest = trip.destination.geometry.coordinates;           // [lon, lat]
              const origin = [dest[1], dest[0]];
              const route = trip.summary && trip.summary.locations ? trip.summary.locations.coordinates.map((c) => [c[1], c[0]]) : [];
              const line = trip.status === "active" && trip.estimate && trip.estimate.route && trip.estimate.route.polyline;
              const planned = line ? line.coordinates.map((c) => [c[1], c[0]]) : [];
              const points = [origin, ...route, ...planned, ...trail];
              const xy = points.map((p) => project(origin, p[0], p[1]));
              // The scale steps through round zooms and never zooms in: the car moves on a still map
              // (and two visitors at different moments see the same map).
              const needed = Math.max(...xy.map(([x, y]) => Math.max(Math.abs(x), Math.abs(y)) * 1.15));
              extent = Math.max(extent, [250, 500, 1000, 2000, 5000, 10000, 20000, 50000].find((e) => e >= needed) || needed);
              const scale = 190 / extent;                                    // metres → px, destination at the centre
              const px = ([x, y]) => [300 + x * scale, 200 - y * scale];
              const place = (p) => px(project(origin, p[0], p[1]));

              // A grid line every "round" distance, so the map has a scale.
              const step = [50, 100, 200, 500, 1000, 2000, 5000, 10000].find((s) => s * scale >= 40) || 20000;
              let grid = "";
              for (let m = -Math.ceil(320 / (step * scale)) * step; m * scale <= 320; m += step) {
                grid += `<line class="grid" x1="${300 + m * scale}" y1="0" x2="${300 + m * scale}" y2="400"/>`;
                grid += `<line class="grid" x1="0" y1="${200 + m * scale}" x2="600" y2="${200 + m * scale}"/>`;
              }
              $("grid").innerHTML = grid;
              fetchStreets(origin, view);
              $("streets").innerHTML = streets.map((l) => `<path class="street" d="M${l.map((c) => place([c[1], c[0]]).map((v) => v.toFixed(1)).join(" ")).join(" L")}"/>`).join("");
              $("attribution").textContent = streets.length ? "© OpenStreetMap contributors" : "";
              $("planned").setAttribute("points", planned.map((p) => place(p).join(",")).join(" "));

              const [dx, dy] = place(origin);
              $("dest-marker").setAttribute("cx", dx); $("dest-marker").setAttribute("cy", dy);
              $("route").setAttribute("points", route.map((p) => place(p).join(",")).join(" "));
              $("trail").setAttribute("points", trip.status === "active" ? trail.map((p) => place(p).join(",")).join(" ") : "");
              const marker = $("driver-marker");
              const last = trip.status === "active" ? trail[trail.length - 1] : undefined;
              if (last) {
                const [x, y] = place(last);
                marker.setAttribute("cx", x); marker.setAttribute("cy", y);
                marker.setAttribute("data-lat", last[0]); marker.setAttribute("data-lon", last[1]);
              } else {
                marker.setAttribute("cx", -20); marker.setAttribute("cy", -20);
              }
            }

            // The driver's and car's photos: only the gateway's own photo paths (the page's policy loads no others).
            function photos(driver) {
              for (const [id, url] of [["driver-photo", driver && driver.photo_url], ["car-photo", driver && driver.car && driver.car.photo_url]]) {
                const ok = typeof url === "string" && /^\/v1\/photos\/[0-9a-f]{64}$/.test(url);
                if (ok && $(id).getAttribute("src") !== url) $(id).src = url;
                $(id).hidden = !ok;
              }
            }

            function show(view) {
              const trip = view.trip, driver = view.driver || {};
              photos(view.driver);
              const car = driver.car ? ` · ${driver.car.model} ${driver.car.license_plate}` : "";
              $("driver").textContent = (driver.name || "Your driver") + car;
              if (view.location) {
                const [lon, lat] = view.location.geometry.coordinates;
                const previous = trail[trail.length - 1];
                if (!previous || previous[0] !== lat || previous[1] !== lon) trail.push([lat, lon]);
              }
              if (trip.status === "completed") {
                $("status").textContent = "Trip completed";
                $("live").hidden = true;
                $("summary").hidden = false;
                const s = trip.summary || {};
                $("distance").textContent = ((s.distance || 0) / 1000).toFixed(2) + " km";
                const seconds = Math.round(s.duration || 0);
                $("duration").textContent = seconds < 60 ? seconds + " s" : Math.round(seconds / 60) + " min";
              } else {
                $("status").textContent = trip.destination.arrived_at ? "Arrived" : "On the way";
                const eta = trip.estimate && trip.estimate.arrive_at;
                $("eta").textContent = trip.destination.arrived_at ? "arrived" :
                  eta ? `${new Date(eta).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"})} (${Math.max(0, Math.round((new Date(eta) - Date.now()) / 60000))} min)` : "—";
              }
              draw(view);
            }

            // A ride: its status, then the leg driven now as a trip's page shows it; at the end the
            // route driven, drawn on the streets, and the summary.
            function showRide(view) {
              const ride = view.ride;
              if (view.trip && view.trip.leg !== leg) { leg = view.trip.leg; trail.length = 0; extent = 250; }
              if (!view.driver && ride.driver) view.driver = ride.driver;
              if (view.trip) {
                show(view);
              } else {
                const driver = view.driver || {};
                photos(view.driver);
                $("driver").textContent = ride.driver ? driver.name + (driver.car ? ` · ${driver.car.model} ${driver.car.license_plate}` : "") : "";
                $("eta").textContent = "—";
              }
              if (ride.status === "COMPLETED" && ride.summary) {
                $("live").hidden = true;
                $("summary").hidden = false;
                $("distance").textContent = ((ride.summary.distance || 0) / 1000).toFixed(2) + " km";
                const seconds = Math.round(ride.summary.duration || 0);
                $("duration").textContent = seconds < 60 ? seconds + " s" : Math.round(seconds / 60) + " min";
              }
              $("status").textContent = rideLabels[ride.status] || ride.status;
            }

            async function refresh() {
              try {
                const response = await fetch(endpoint + shareID, {cache: "no-store"});
                const body = await response.json();
                if (!response.ok) { $("error").textContent = body.error ? body.error.message : response.statusText; $("status").textContent = "not found"; return; }
                $("error").textContent = "";
                if (body.ride) {
                  showRide(body);
                  if (body.ride.status === "COMPLETED" || body.ride.status === "CANCELLED") return;   // the end does not change
                } else {
                  show(body);
                  if (body.trip.status === "completed") return;           // a summary does not change
                }
              } catch (e) {
                $("error").textContent = "offline; retrying…";
              }
              setTimeout(refresh, 1000);
            }
            refresh();
            </script>
            """#)
}
