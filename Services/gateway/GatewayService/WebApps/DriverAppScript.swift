/// `/app/driver.js`: the driver app — on and off duty, offers to accept or decline, the way to the
/// pickup and then the drop-off turn by turn, arrive, start, end, chat and earnings. Its position
/// is the browser's (geolocation) or, in the simulator's city, a drive along the route; each fix
/// goes over `/v1/me/live` with the session's device credential (posted to
/// `/v1/devices/{id}/locations` while the socket is down).
enum DriverAppScript {
    static let source = #"""
        "use strict";
        const labels = {
          ACCEPTED: "Accepted: your way to the pickup is coming", PICKING_UP: "To the pickup", REACHED_PICKUP: "At the pickup: start when the rider is in",
          STARTED_RIDE: "Ride started", DROPPING_OFF: "To the drop-off", REACHED_DROPOFF: "At the drop-off: end the ride",
          COMPLETED: "Ride completed", CANCELLED: "Ride cancelled"
        };
        const saved = JSON.parse(sessionStorage.getItem("ride.position") || "null");
        const state = {position: saved || App.centre(), online: false, order: null, route: [], offers: [], socket: null, live: null, gps: null, driving: null, batch: Date.now()};
        const map = new App.StreetMap($("map"), App.centre());

        function draw() {
          map.drawStreets();
          map.marker("me-marker", state.position[0], state.position[1], "you");
          map.line("route", state.route);
          if (state.order) map.marker("target-marker", ...target(state.order), "where to"); else map.remove("target-marker");
        }

        function target(order) {
          const place = ["STARTED_RIDE", "DROPPING_OFF", "REACHED_DROPOFF", "COMPLETED"].includes(order.status) ? order.dropoff : order.pickup;
          return [place.latitude, place.longitude];
        }

        // One fix to the platform: over the live socket under the device credential while it is
        // open (tracking answers each batch on it), else posted.
        async function report() {
          const [latitude, longitude] = state.position;
          sessionStorage.setItem("ride.position", JSON.stringify(state.position));
          const body = {batch_id: ++state.batch, locations: [{latitude, longitude, recorded_at: new Date().toISOString(), accuracy: 5}]};
          if (state.live && state.live.post({batch: Object.assign({device_credential: App.session.device_credential}, body)})) return;
          try { await App.api("POST", `/devices/${encodeURIComponent(App.session.user.device_id)}/locations`, body); }
          catch (e) { if (App.session) App.say("Your position did not reach the platform: " + e.message, "error"); }   // signed out: that is said
        }

        $("online").addEventListener("change", async () => {
          const available = $("online").checked;
          try {
            await App.api("PUT", "/me/availability", {available});
            state.online = available;
            App.say(available ? "You are online: offers come here." : "You are offline.");
            if (available) report();
          } catch (e) {
            $("online").checked = !available;
            App.say((available ? "Could not go online: " : "Could not go offline: ") + e.message, "error");
          }
        });

        $("gps").addEventListener("click", () => {
          if (!navigator.geolocation) { App.say("This browser has no location: use “Drive along the route”.", "error"); return; }
          if (state.gps !== null) { navigator.geolocation.clearWatch(state.gps); state.gps = null; $("gps").textContent = "Use my location"; return; }
          state.gps = navigator.geolocation.watchPosition((fix) => {
            state.position = [fix.coords.latitude, fix.coords.longitude];
            report(); draw();
          }, (error) => {
            state.gps = null; $("gps").textContent = "Use my location";
            App.say("Location refused or unavailable (" + error.message + "): use “Drive along the route”, or allow location for this page (it needs https on a phone).", "error");
          }, {enableHighAccuracy: true});
          $("gps").textContent = "Stop using my location";
        });

        // The simulator's control: the car moves along the route shown, a fix every half second.
        $("drive").addEventListener("click", () => {
          if (state.driving) { clearInterval(state.driving); state.driving = null; $("drive").textContent = "Drive along the route"; return; }
          if (state.route.length < 2) { App.say("No route to drive yet."); return; }
          let path = state.route.slice(), i = 0;
          $("drive").textContent = "Stop driving";
          state.driving = setInterval(() => {
            // About 30 m a step: at 60 m/s of wall time, a short ride takes a minute.
            let left = 30;
            while (left > 0 && i < path.length - 1) {
              const [a, b] = [path[i], path[i + 1]];
              const d = distance(state.position, b);
              if (d <= left) { state.position = b; i += 1; left -= d; }
              else { const f = left / d; state.position = [state.position[0] + (b[0] - state.position[0]) * f, state.position[1] + (b[1] - state.position[1]) * f]; left = 0; }
            }
            report(); draw();
            if (i >= path.length - 1) { clearInterval(state.driving); state.driving = null; $("drive").textContent = "Drive along the route"; }
          }, 500);
        });

        function distance(a, b) {
          const k = Math.PI / 180, x = (b[1] - a[1]) * k * Math.cos((a[0] + b[0]) / 2 * k), y = (b[0] - a[0]) * k;
          return Math.sqrt(x * x + y * y) * 6371000;
        }

        async function loadOffers() {
          if (!state.online || state.order) { $("offers").replaceChildren(); return; }
          try {
            const reply = await App.api("GET", `/orders?status=NEW&limit=5`);
            $("offers").replaceChildren(...reply.orders.map(offerCard));
          } catch (e) { /* the next poll tries again */ }
        }

        function offerCard(order) {
          const card = document.createElement("li");
          card.className = "card offer";
          card.appendChild(App.text("p", `Pickup ${order.pickup.address || order.pickup.latitude.toFixed(4) + ", " + order.pickup.longitude.toFixed(4)} → ${order.dropoff.address || "drop-off"}` + (order.fare_quote ? ` · ${App.money(order.fare_quote.total_cents, order.fare_quote.currency)}` : "")));
          for (const [action, text] of [["accept", "Accept"], ["decline", "Decline"]]) {
            const button = App.text("button", text, action);
            button.type = "button";
            button.addEventListener("click", async () => {
              try {
                const reply = await App.api("POST", `/orders/${order.id}/${action}`);
                if (action === "accept") follow(reply); else loadOffers();
              } catch (e) {
                App.say((e.code === "illegal_transition" || e.status === 409 || e.status === 403) ? "That ride was taken by another driver or cancelled." : e.message, "error");
                loadOffers();
              }
            });
            card.appendChild(button);
          }
          return card;
        }

        function follow(order) {
          state.order = order;
          $("offers").replaceChildren(); $("ride").hidden = false; $("messages").replaceChildren();
          App.api("GET", `/orders/${order.id}/messages`).then((r) => (r.messages || []).forEach(showMessage)).catch(() => {});
          if (state.socket) state.socket.close();
          state.socket = App.live(`/orders/${order.id}/live`, onRide);
          showOrder(order);
        }

        function showOrder(order) {
          // A reply can arrive after the live socket's newer status: the newest version wins.
          if (state.order && state.order.id === order.id && order.version < state.order.version) return;
          const previous = state.order && state.order.status;
          state.order = order;
          $("status").textContent = labels[order.status] || order.status;
          $("rider").textContent = `Rider: ${order.rider.name}`;
          $("arrive").hidden = !["PICKING_UP", "DROPPING_OFF"].includes(order.status);
          $("start").hidden = order.status !== "REACHED_PICKUP";
          $("end").hidden = order.status !== "REACHED_DROPOFF";
          $("close").hidden = !["COMPLETED", "CANCELLED"].includes(order.status);
          if (order.status !== previous || !state.route.length) loadRoute();
          if (order.status === "CANCELLED") App.say("The ride was cancelled" + (order.cancel_reason ? ": " + order.cancel_reason : "."));
          if (order.status === "COMPLETED") { App.say("Ride completed."); loadEarnings(); }
          draw();
        }

        async function loadRoute() {
          if (!state.order || !["PICKING_UP", "DROPPING_OFF"].includes(state.order.status)) { state.route = []; $("steps").replaceChildren(); return; }
          try {
            showRoute(await App.api("GET", `/orders/${state.order.id}/route`));
          } catch (e) { setTimeout(loadRoute, 1000); }   // the trip's first estimate follows the first fix
        }

        function showRoute(route) {
          const estimate = route.estimate;
          if (!estimate || !estimate.route) { setTimeout(loadRoute, 1000); return; }
          state.route = [state.position, ...estimate.route.polyline.coordinates.map((c) => [c[1], c[0]])];
          $("steps").replaceChildren(...(estimate.route.steps || []).map((s) => App.text("li", `${s.manoeuvre.replace(/_/g, " ")}${s.name ? " onto " + s.name : ""} · ${s.distance} m`)));
          $("eta").textContent = estimate.arrive_at ? `Arrive by ${App.time(estimate.arrive_at)}` : "";
          map.fit(state.route);
          draw();
        }

        function onRide(message) {
          if (message.order) showOrder(message.order);
          if (message.type === "eta" && message.estimate && !state.driving) showRoute({estimate: message.estimate});
          if (message.type === "chat") showMessage(message.message);
          if (message.type === "closed") { App.say("This ride is no longer yours.", "error"); closeRide(); }
        }

        const showMessage = App.chat(() => state.order, "driver");

        for (const action of ["arrive", "start", "end"]) {
          $(action).addEventListener("click", async () => {
            try { showOrder(await App.api("POST", `/orders/${state.order.id}/${action}`)); }
            catch (e) { App.say(e.message, "error"); }
          });
        }

        function closeRide() {
          if (state.socket) state.socket.close();
          state.order = null; state.route = []; $("ride").hidden = true; $("steps").replaceChildren();
          draw(); loadOffers();
        }
        $("close").addEventListener("click", closeRide);

        async function loadEarnings() {
          try {
            const reply = await App.api("GET", "/me/earnings?days=7");
            $("earnings").replaceChildren(...reply.days.map((d) => App.text("li", `${d.day}: ${d.rides} ride${d.rides === 1 ? "" : "s"}, ${App.money(d.earnings_cents, reply.currency)}`)));
          } catch (e) { /* shown empty */ }
        }

        function onNotification(message) {
          if (message.type === "error" && message.batch_id !== undefined) App.say("Your position did not reach the platform: " + message.error.message, "error");
          if (message.type !== "notification") return;
          const n = message.notification;
          if (n.kind === "new_offer") loadOffers();
          if (n.kind === "offer_withdrawn") { App.say("An offer was withdrawn: another driver took it."); loadOffers(); }
          if (n.kind === "destination_changed" || n.kind === "rated") App.say(`${n.title}: ${n.body}`);
          if (n.kind === "rated") loadEarnings();   // a ride paid late (the rider's card refused at first) counts from then
        }

        App.onSession = async () => {
          const signedIn = !!App.session;
          $("sign-in").hidden = signedIn; $("log-out").hidden = !signedIn; $("app").hidden = !signedIn;
          if (!signedIn) return;
          $("who").textContent = App.session.user.name;
          state.live = App.live("/me/live", onNotification);
          loadEarnings();
          try {
            // After a reload: online as tracking has it, from the last position it knows.
            const device = await App.api("GET", "/me/device");
            state.online = device.available; $("online").checked = device.available;
            const at = device.location && device.location.geometry.coordinates;
            if (at && !saved) state.position = [at[1], at[0]];
          } catch (e) { /* a device tracking has not heard from yet: offline */ }
          try {
            const mine = await App.api("GET", "/orders?limit=5");
            const open = (mine.orders || []).find((o) => o.driver && o.driver.id === App.session.user.id && !["COMPLETED", "CANCELLED"].includes(o.status));
            if (open) follow(open);
          } catch (e) { App.say(e.message, "error"); }
          draw();
        };
        setInterval(() => { if (App.session && state.online && !state.driving && state.gps === null) report(); }, 4000);
        setInterval(loadOffers, 3000);
        setInterval(() => { if (App.session) loadEarnings(); }, 30000);

        App.signIn("driver", () => {
          const car = {model: $("car-model").value.trim() || "Car", license_plate: $("car-plate").value.trim() || "WEB-1"};
          for (const [field, id] of [["make", "car-make"], ["color", "car-color"]]) if ($(id).value.trim()) car[field] = $(id).value.trim();
          return {device_id: "web-" + App.key().slice(0, 16), car};
        });
        App.onSession();
        """#
}
